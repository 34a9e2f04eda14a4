package entrystore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// RemoteTask is the remote A2A task a spawn_agents child started (migration
// 0021), keyed by the child: execution, tool call and index in the call.
// MessageID is chosen before the message is sent; TaskID is the remote's,
// empty until it answered.
type RemoteTask struct {
	OrgID       string `db:"org_id"`
	ExecutionID string `db:"agent_execution_id"`
	ToolCallID  string `db:"tool_call_id"`
	ChildIndex  int    `db:"child_index"`
	RemoteAgent string `db:"remote_agent"`
	MessageID   string `db:"message_id"`
	TaskID      string `db:"task_id"`
}

// ClaimRemoteTask returns the child's record, writing t as it when there is
// none: a retry gets the first attempt's message and task IDs back.
func (s *Store) ClaimRemoteTask(ctx context.Context, t RemoteTask) (RemoteTask, error) {
	rows, err := s.pool.Query(ctx, `
		WITH ins AS (
			INSERT INTO agent_remote_task (org_id, agent_execution_id, tool_call_id, child_index, remote_agent, message_id)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT DO NOTHING
			RETURNING org_id::text, agent_execution_id::text, tool_call_id, child_index, remote_agent, message_id,
				coalesce(task_id, '') AS task_id)
		SELECT * FROM ins
		UNION ALL
		SELECT org_id::text, agent_execution_id::text, tool_call_id, child_index, remote_agent, message_id,
			coalesce(task_id, '') FROM agent_remote_task
		WHERE org_id = $1 AND agent_execution_id = $2 AND tool_call_id = $3 AND child_index = $4`,
		t.OrgID, t.ExecutionID, t.ToolCallID, t.ChildIndex, t.RemoteAgent, t.MessageID)
	if err != nil {
		return RemoteTask{}, wrap("claim remote task", err)
	}
	got, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[RemoteTask])
	if err != nil {
		return RemoteTask{}, wrap("claim remote task", err)
	}
	return got, nil
}

// SetRemoteTaskID records the remote's task ID on the child's record; a
// record that has one keeps it (the first answer is the task).
func (s *Store) SetRemoteTaskID(ctx context.Context, t RemoteTask, taskID string) error {
	_, err := s.pool.Exec(ctx, `
		UPDATE agent_remote_task SET task_id = $5
		WHERE org_id = $1 AND agent_execution_id = $2 AND tool_call_id = $3 AND child_index = $4 AND task_id IS NULL`,
		t.OrgID, t.ExecutionID, t.ToolCallID, t.ChildIndex, taskID)
	if err != nil {
		return fmt.Errorf("entrystore: set remote task id: %w", err)
	}
	return nil
}
