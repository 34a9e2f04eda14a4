package entrystore

import "context"

// LatestStreamEventID is the ID of the execution's newest stream event, 0
// when it has none: where a follower that wants only what happens from now
// on starts (the gateway's /v1/responses, which streams one turn of a
// conversation whose earlier turns are already in the table).
func (s *Store) LatestStreamEventID(ctx context.Context, orgID, executionID string) (int64, error) {
	op := "latest stream event of " + executionID
	ids, err := readIDs(op, orgID, executionID)
	if err != nil {
		return 0, err
	}
	var id int64
	err = s.pool.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM agent_stream_event
		WHERE agent_execution_id = $2 AND org_id = $1`, ids[0], ids[1]).Scan(&id)
	return id, wrap(op, err)
}
