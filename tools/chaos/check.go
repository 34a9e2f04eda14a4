package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// findings are the invariants' violations, counted, with examples.
type findings struct {
	Lost, Duplicated, Forked, Rerun, InboxPending, LeafMismatch int
	Undelivered, Undecodable, FailedByOutage, Stuck             int
	// DuplicatedBy splits Duplicated by what was duplicated.
	DuplicatedBy map[string]int
	Examples     []string
	Acked        int
	Recovery     []time.Duration // per worker kill and execution in flight on it
	Cancel       []time.Duration // per cancel probe: request to CANCELLED
	// Overlapped counts recoveries another fault that stops progress (a
	// worker kill, a Postgres or Temporal restart or outage) cut into:
	// they time two faults, not one worker's death, and stay out of
	// Recovery's percentiles.
	Overlapped  int
	Unrecovered int
	// RecoveryKills counts the worker kills Recovery has a sample of.
	RecoveryKills int
	// SSEDuplicated counts stream events an SSE client received more than
	// once (their extra copies; also in Duplicated), SSEOutOfOrder those
	// it received after a higher ID.
	SSEDuplicated, SSEOutOfOrder int
	// Interrupted counts tool calls announced failed with their context
	// cancelled and then started again (checkEvents): an older build's
	// attempt cut short by its worker's graceful stop.
	Interrupted int
	// LostMessages are the messages counted in Lost (failover.go dates
	// them against the last replicated commit).
	LostMessages []*message
}

func (f *findings) example(format string, args ...any) {
	if len(f.Examples) < 40 {
		f.Examples = append(f.Examples, fmt.Sprintf(format, args...))
	}
}

func (f *findings) dup(what string, n int, format string, args ...any) {
	if n <= 0 {
		return
	}
	f.Duplicated += n
	f.DuplicatedBy[what] += n
	f.example(format, args...)
}

// entry is an agent_entry row.
type entry struct {
	ID, Parent, Type, Role, Content string
	Created                         time.Time
}

// check reads the store and the call log after a run and counts every
// violation of issue 19's invariants.
func check(ctx context.Context, c *cluster, d *driver, convs []*conversation, faults []*fault) (*findings, error) {
	f := &findings{DuplicatedBy: map[string]int{}}
	calls, err := readCallLog(c.callLog())
	if err != nil {
		return nil, err
	}
	// Executions per conversation: more than one is a duplicated create.
	perTag := map[string]int{}
	rows, err := c.pool.Query(ctx, `SELECT coalesce(metadata->>'chaos', '') FROM agent_execution`)
	if err != nil {
		return nil, fmt.Errorf("chaos: check executions: %w", err)
	}
	for rows.Next() {
		var tag string
		if err := rows.Scan(&tag); err != nil {
			return nil, err
		}
		perTag[tag]++
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, cv := range convs {
		f.dup("execution", perTag[cv.Tag]-1, "%s: %d executions for one create", cv.Tag, perTag[cv.Tag])
		for _, m := range cv.Messages {
			if m.Acked {
				f.Acked++
			}
		}
		if cv.ExecID == "" {
			if cv.Messages[0].Acked {
				f.Lost++
				f.LostMessages = append(f.LostMessages, cv.Messages[0])
				f.example("%s: create acknowledged, no execution", cv.Tag)
			} else {
				f.Stuck++
				f.example("%s: never created: %s", cv.Tag, cv.Err)
			}
			continue
		}
		// The call log names a call by its conversation's text, which a
		// duplicated create shares: its calls cannot be told apart.
		if perTag[cv.Tag] > 1 {
			cv.ambiguousCalls = true
		}
		if err := checkExecution(ctx, c, d, cv, calls, f); err != nil {
			return nil, err
		}
	}
	var pending int
	if err := c.pool.QueryRow(ctx, `SELECT count(*) FROM agent_signal WHERE NOT consumed`).Scan(&pending); err != nil {
		return nil, fmt.Errorf("chaos: check inbox: %w", err)
	}
	f.InboxPending = pending
	if pending > 0 {
		f.example("%d inbox rows never consumed", pending)
	}
	return f, measureRecovery(ctx, c, faults, f)
}

func checkExecution(ctx context.Context, c *cluster, d *driver, cv *conversation, calls []scripted.CallRecord, f *findings) error {
	id := cv.ExecID
	var status, errText string
	err := c.pool.QueryRow(ctx, `SELECT status, error FROM agent_execution WHERE id = $1`, id).Scan(&status, &errText)
	if errors.Is(err, pgx.ErrNoRows) {
		// Acknowledged, then gone: a store that lost commits (-failover
		// with asynchronous replication) loses the whole execution.
		for _, m := range cv.Messages {
			if m.Acked {
				f.Lost++
				f.LostMessages = append(f.LostMessages, m)
			}
		}
		f.example("%s (%s): create acknowledged, the execution is not in the store", cv.Tag, id)
		return nil
	}
	if err != nil {
		return fmt.Errorf("chaos: check %s: %w", id, err)
	}
	entries, err := loadEntries(ctx, c, id)
	if err != nil {
		return err
	}
	var leaf string
	_ = c.pool.QueryRow(ctx, `SELECT coalesce(leaf_entry_id::text, '') FROM agent_checkpoint
		WHERE agent_execution_id = $1 ORDER BY sequence DESC LIMIT 1`, id).Scan(&leaf)

	// One chain from the root to the latest checkpoint's leaf, and nothing
	// off it.
	byID := map[string]*entry{}
	children := map[string]int{}
	for _, e := range entries {
		byID[e.ID] = e
		children[e.Parent]++
	}
	var chain []*entry
	for e := byID[leaf]; e != nil; e = byID[e.Parent] {
		chain = append([]*entry{e}, chain...)
	}
	// A running execution is counted stuck below; its work after the
	// checkpoint is no fork.
	settled := status != "RUNNING" && status != "PENDING" && status != "CANCELLING"
	if settled && (len(chain) == 0 || chain[0].Parent != "") {
		f.LeafMismatch++
		f.example("%s (%s): no chain from a root to the checkpoint leaf %q", cv.Tag, id, leaf)
	}
	if settled && children[leaf] > 0 {
		f.LeafMismatch++
		f.example("%s (%s): entries after the latest checkpoint's leaf", cv.Tag, id)
	}
	if off := len(entries) - len(chain) - descendants(leaf, entries); off > 0 {
		f.Forked += off
		f.example("%s (%s): %d entries off the chain from root to leaf", cv.Tag, id, off)
	}

	// Every acknowledged message is a user entry exactly once.
	for _, m := range cv.Messages {
		n := 0
		for _, e := range entries {
			if e.Role == "user" && strings.Contains(e.Content, "["+m.Tag+"]") {
				n++
			}
		}
		switch {
		case m.Acked && n == 0:
			f.Lost++
			f.LostMessages = append(f.LostMessages, m)
			f.example("%s: acknowledged message %s is no user entry", id, m.Tag)
		case n > 1:
			f.dup("user entry", n-1, "%s: message %s is %d user entries (tries %d, delivered twice %v)", id, m.Tag, n, m.Tries, m.Duplicated)
		}
	}

	// Expected state: waiting (a one-shot: completed) with the last
	// acknowledged message answered at the end of the chain.
	last, want := lastAcked(cv, entries), "WAITING"
	if cv.OneShot {
		want = "COMPLETED"
	}
	if cv.Closed {
		want = "CANCELLED"
	}
	switch {
	case status == "FAILED":
		f.FailedByOutage++
		f.example("%s (%s): FAILED: %s", cv.Tag, id, errText)
	case status != want || len(chain) == 0 || !answers(chain, last):
		f.Stuck++
		f.example("%s (%s): %s, last acknowledged %s not answered at the leaf (%s)", cv.Tag, id, status, last, cv.Err)
	}

	// The REST API shows the same path as the store.
	rest, err := d.messages(ctx, id)
	if err != nil {
		return fmt.Errorf("chaos: check %s over REST: %w", id, err)
	}
	var restPath, sqlPath []string
	for _, m := range rest {
		restPath = append(restPath, m.Role+": "+m.text())
	}
	for _, e := range chain {
		var m agentsdk.Message
		if e.Type == "message" && json.Unmarshal([]byte(e.Content), &m) == nil && m.Role != agentsdk.RoleSystem {
			sqlPath = append(sqlPath, string(m.Role)+": "+m.Text())
		}
	}
	if settled && strings.Join(restPath, "\n") != strings.Join(sqlPath, "\n") {
		f.LeafMismatch++
		f.example("%s (%s): the REST path (%d messages) is not the store's chain to the checkpoint leaf (%d)", cv.Tag, id, len(restPath), len(sqlPath))
	}

	if err := checkToolCalls(ctx, c, cv, f); err != nil {
		return err
	}
	if !cv.ambiguousCalls {
		checkModelReruns(cv, chain, calls, f)
	}
	return checkStream(ctx, c, cv, f)
}

func loadEntries(ctx context.Context, c *cluster, id string) ([]*entry, error) {
	rows, err := c.pool.Query(ctx, `SELECT id::text, coalesce(parent_id::text, ''), entry_type, coalesce(role, ''), content::text, created_at
		FROM agent_entry WHERE agent_execution_id = $1 ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("chaos: check entries of %s: %w", id, err)
	}
	defer rows.Close()
	var out []*entry
	for rows.Next() {
		e := &entry{}
		if err := rows.Scan(&e.ID, &e.Parent, &e.Type, &e.Role, &e.Content, &e.Created); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// descendants counts the entries below leaf (work not yet checkpointed).
func descendants(leaf string, entries []*entry) int {
	below := map[string]bool{leaf: true}
	n := 0
	for _, e := range entries { // in arrival order: parents first
		if below[e.Parent] && e.ID != leaf {
			below[e.ID] = true
			n++
		}
	}
	return n
}

// lastAcked is the last message taken. A message whose send was cut off unanswered (the gateway killed
// mid-request, then a 409 saying so) may still have been taken: it
// counts when it is a user entry, as the client would see by listing the
// messages.
func lastAcked(cv *conversation, entries []*entry) string {
	for i := len(cv.Messages) - 1; i >= 0; i-- {
		m := cv.Messages[i]
		if m.Acked || slices.ContainsFunc(entries, func(e *entry) bool {
			return e.Role == "user" && strings.Contains(e.Content, "["+m.Tag+"]")
		}) {
			return m.Tag
		}
	}
	return ""
}

// answers reports whether the chain ends with an answer (an assistant
// message without tool calls) to the message tagged tag.
func answers(chain []*entry, tag string) bool {
	leaf := chain[len(chain)-1]
	if leaf.Role != "assistant" || strings.Contains(leaf.Content, `"type":"tool_call"`) {
		return false
	}
	for i := len(chain) - 1; i >= 0; i-- {
		if chain[i].Role == "user" {
			return strings.Contains(chain[i].Content, "["+tag+"]")
		}
	}
	return false
}

// checkToolCalls counts tool-call records kept twice for one call.
func checkToolCalls(ctx context.Context, c *cluster, cv *conversation, f *findings) error {
	rows, err := c.pool.Query(ctx, `SELECT tool_call_id, count(*) FROM agent_tool_call
		WHERE agent_execution_id = $1 GROUP BY tool_call_id HAVING count(*) > 1`, cv.ExecID)
	if err != nil {
		return fmt.Errorf("chaos: check tool calls: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var call string
		var n int
		if err := rows.Scan(&call, &n); err != nil {
			return err
		}
		f.dup("tool-call record", n-1, "%s: tool call %s recorded %d times", cv.ExecID, call, n)
	}
	return rows.Err()
}

// checkModelReruns finds model calls started again after their answer
// was stored: a call is named by its turn (assistant messages before it)
// and the last user message before it, as the call log names it.
func checkModelReruns(cv *conversation, chain []*entry, calls []scripted.CallRecord, f *findings) {
	turn, user := 0, ""
	for _, e := range chain {
		if e.Type != "message" {
			continue
		}
		var m agentsdk.Message
		if json.Unmarshal([]byte(e.Content), &m) != nil {
			continue
		}
		switch e.Role {
		case "user":
			user = m.Text()
		case "assistant":
			for _, cl := range calls {
				if cl.Phase == "start" && cl.Turn == turn && cl.User == user && cl.At.After(e.Created) {
					f.Rerun++
					f.example("%s: model call of turn %d started at %s, after its answer was stored at %s",
						cv.ExecID, turn, cl.At.Format("15:04:05.000"), e.Created.Format("15:04:05.000"))
				}
			}
			turn++
		}
	}
}

// readCallLog reads the workers' model-call log.
func readCallLog(path string) ([]scripted.CallRecord, error) {
	fh, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("chaos: call log: %w", err)
	}
	defer fh.Close()
	var out []scripted.CallRecord
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		var r scripted.CallRecord
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			out = append(out, r)
		}
	}
	return out, sc.Err()
}
