package entrystore

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// NotifyChannelPrefix starts the name of the Postgres channel stream events
// are announced on, with payload "<execution_id>:<event id>"; listeners then
// read the rows, so the 8 KB NOTIFY limit never bounds an event.
//
// NOTIFY is database-wide but the tables live in a schema (tests give every
// package its own), so the channel is per schema: "agentree_stream.<schema>",
// or the schema's md5 when that would pass Postgres's 63-byte name limit.
// Listeners ask NotifyChannel on their own connection, which shares the
// store's search_path, and hear only their own schema's events.
const NotifyChannelPrefix = "agentree_stream"

// notifyChannelSQL computes the channel of the connection's current schema;
// writers and listeners use this one expression, so they always agree.
const notifyChannelSQL = `CASE WHEN octet_length(current_schema()) <= 47
	THEN '` + NotifyChannelPrefix + `.' || current_schema()
	ELSE '` + NotifyChannelPrefix + `.' || md5(current_schema()) END`

// ListenStream makes conn LISTEN on the channel stream events of its
// current schema are announced on; read them with WaitForNotification
// and ParseStreamNotification.
func ListenStream(ctx context.Context, conn *pgx.Conn) error {
	channel, err := NotifyChannel(ctx, conn)
	if err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return wrap("listen to the stream", err)
	}
	return nil
}

// ParseStreamNotification reads a stream notification's payload,
// "<execution_id>:<event id>", as the inserts below write it: the
// execution, and the first event of the batch it announces.
func ParseStreamNotification(payload string) (execution string, id int64, ok bool) {
	execution, idText, found := strings.Cut(payload, ":")
	id, err := strconv.ParseInt(idText, 10, 64)
	return execution, id, found && err == nil && execution != ""
}

// NotifyChannel returns the channel stream events of conn's current schema
// are announced on, for a LISTEN on that connection.
func NotifyChannel(ctx context.Context, conn *pgx.Conn) (string, error) {
	var ch *string
	if err := conn.QueryRow(ctx, `SELECT `+notifyChannelSQL).Scan(&ch); err != nil {
		return "", wrap("stream notify channel", err)
	}
	if ch == nil {
		return "", errf("stream notify channel", ErrInvalid, "no current schema: search_path names no existing schema")
	}
	return *ch, nil
}

// StreamEvent is one event of an execution's live stream (a token, a tool
// start, a status change), kept for a while so a reconnecting SSE client can
// resume after the last ID it saw.
type StreamEvent struct {
	ID          int64           `db:"id"`
	OrgID       string          `db:"org_id"`
	ExecutionID string          `db:"execution_id"`
	Event       string          `db:"event"`
	Data        json.RawMessage `db:"data"`
	CreatedAt   time.Time       `db:"created_at"`
}

const streamCols = `id, org_id::text AS org_id, agent_execution_id::text AS execution_id, event, data, created_at`

func (e StreamEvent) utc() StreamEvent { e.CreatedAt = e.CreatedAt.UTC(); return e }

// AppendStreamEvent stores an event and notifies its schema's channel in one
// statement, hence one transaction: listeners are told only of rows they can
// read. A per-execution advisory lock, held to commit, makes one
// execution's events commit in ID order, so a reader past an ID never
// misses a lower one that committed late.
func (s *Store) AppendStreamEvent(ctx context.Context, orgID, executionID, event string, data json.RawMessage) (StreamEvent, error) {
	const op = "append stream event"
	ids, err := writeIDs(op, orgID, executionID)
	if err != nil {
		return StreamEvent{}, err
	}
	if event == "" {
		return StreamEvent{}, errf(op, ErrInvalid, "event name is required")
	}
	out, err := queryOne[StreamEvent](ctx, s.pool, `
		WITH l AS (SELECT pg_advisory_xact_lock(hashtextextended($2::uuid::text, 0))),
		ins AS (
			INSERT INTO agent_stream_event (org_id, agent_execution_id, event, data)
			SELECT $1, $2, $3, $4 FROM l
			WHERE EXISTS (SELECT 1 FROM agent_execution WHERE id = $2 AND org_id = $1)
			RETURNING *
		)
		SELECT `+streamCols+` FROM ins,
			LATERAL (SELECT pg_notify(`+notifyChannelSQL+`, ins.agent_execution_id::text || ':' || ins.id)) n`,
		ids[0], ids[1], event, jsonOr(data, "{}"))
	return out.utc(), wrap(op, err)
}

// NewStreamEvent is one event for AppendStreamEvents: its name and data.
type NewStreamEvent struct {
	Event string
	Data  json.RawMessage
}

// AppendStreamEvents stores events, in order, and notifies its schema's
// channel once, all in one statement: one write for a whole batch of
// tokens. The events get increasing IDs in the order given, under the same
// per-execution advisory lock as AppendStreamEvent, so one execution's
// events still commit in ID order. The one notification names the batch's
// first (lowest) ID: a listener reading the rows after the ID before it
// reads the whole batch. It returns the stored events, oldest first.
func (s *Store) AppendStreamEvents(ctx context.Context, orgID, executionID string, events []NewStreamEvent) ([]StreamEvent, error) {
	const op = "append stream events"
	ids, err := writeIDs(op, orgID, executionID)
	if err != nil {
		return nil, err
	}
	if len(events) == 0 {
		return nil, nil
	}
	names, data, err := streamEventArgs(op, events)
	if err != nil {
		return nil, err
	}
	out, err := queryAll[StreamEvent](ctx, s.pool, streamEventsSQL(""), ids[0], ids[1], names, data)
	if err == nil && len(out) == 0 {
		err = errNoRows
	}
	return utcAll(out, StreamEvent.utc), wrap(op, err)
}

// streamEventArgs are events' names and data as AppendStreamEvents'
// statement takes them.
func streamEventArgs(op string, events []NewStreamEvent) (names, data []string, err error) {
	names = make([]string, len(events))
	data = make([]string, len(events))
	for i, ev := range events {
		if ev.Event == "" {
			return nil, nil, errf(op, ErrInvalid, "event %d: event name is required", i)
		}
		names[i], data[i] = ev.Event, jsonOr(ev.Data, "{}")
	}
	return names, data, nil
}

// streamEventsSQL stores events ($3 names, $4 data) of execution $2 in
// organization $1, in order, and notifies the schema's channel once, in
// one statement: one write for a whole batch of tokens. The events get
// increasing IDs in the order given, under the same per-execution
// advisory lock as AppendStreamEvent, so one execution's events still
// commit in ID order. The one notification names the batch's first
// (lowest) ID: a listener reading the rows after the ID before it reads
// the whole batch. cond, when set, is one more condition the events are
// stored under (its parameters from $5 on).
//
// The rows are inserted in ordinality order, so the identity column
// numbers them in the order given; n runs once, as its function is
// volatile.
func streamEventsSQL(cond string) string {
	if cond != "" {
		cond = " AND " + cond
	}
	return `
		WITH l AS (SELECT pg_advisory_xact_lock(hashtextextended($2::uuid::text, 0))),
		ins AS (
			INSERT INTO agent_stream_event (org_id, agent_execution_id, event, data)
			SELECT $1, $2, e.event, e.data::jsonb
			FROM l, unnest($3::text[], $4::text[]) WITH ORDINALITY AS e(event, data, ord)
			WHERE EXISTS (SELECT 1 FROM agent_execution WHERE id = $2 AND org_id = $1)` + cond + `
			ORDER BY e.ord
			RETURNING *
		),
		n AS (
			SELECT pg_notify(` + notifyChannelSQL + `, $2::uuid::text || ':' || min(id)) FROM ins HAVING count(*) > 0
		)
		SELECT ` + streamCols + ` FROM ins, n ORDER BY id`
}

// StreamEventsAfter returns up to limit events of the execution with IDs
// above afterID, oldest first (limit as in Page).
func (s *Store) StreamEventsAfter(ctx context.Context, orgID, executionID string, afterID int64, limit int) ([]StreamEvent, error) {
	op := "stream events of " + executionID
	ids, err := readIDs(op, orgID, executionID)
	if err != nil {
		return nil, err
	}
	evs, err := queryAll[StreamEvent](ctx, s.pool, `SELECT `+streamCols+` FROM agent_stream_event
		WHERE agent_execution_id = $2 AND org_id = $1 AND id > $3 ORDER BY id LIMIT $4`,
		ids[0], ids[1], afterID, Page{Limit: limit}.limit())
	return utcAll(evs, StreamEvent.utc), wrap(op, err)
}

// PruneStreamEvents deletes events created before olderThan, across all
// organizations, and reports how many: the replay window's upkeep.
func (s *Store) PruneStreamEvents(ctx context.Context, olderThan time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM agent_stream_event WHERE created_at < $1`, olderThan)
	if err != nil {
		return 0, wrap("prune stream events", err)
	}
	return tag.RowsAffected(), nil
}
