package entrystore

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Announced writes: a write and the stream events that tell of it (a tool
// call's record and task.started, a checkpoint and agent.checkpoint, a
// move to WAITING and agent.waiting) sent in one round trip and committed
// in one transaction, instead of two of each. A turn makes several; each
// commit is a WAL flush, which on a busy worker's Postgres costs more than
// the statements it makes durable. The events are stored only when the
// write did what they announce, which a condition on the rows the write
// left decides in the same transaction.

// thisTx is the current transaction's ID as a row's xmin holds it, or
// NULL when it has written nothing (a row it left has xmin = thisTx).
// Unlike pg_current_xact_id(), it never assigns one: a write that did
// nothing commits nothing to flush.
const thisTx = `pg_current_xact_id_if_assigned()::xid`

// announced sends write (with args, its one row read by read) and then
// events of execution in organization, under cond (its parameters from
// $5 on, condArgs), in one batch: one round trip, and one implicit
// transaction, so both commit or neither does. read is called with the
// write's rows; its error is announced's.
func (s *Store) announced(ctx context.Context, write string, args []any, read func(pgx.Rows) error,
	ids []string, events []NewStreamEvent, cond string, condArgs ...any) error {
	names, data, err := streamEventArgs("announce", events)
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	b.Queue(write, args...).Query(read)
	queueEvents(b, ids, names, data, cond, condArgs...)
	return s.pool.SendBatch(ctx, b).Close()
}

// queueEvents queues the statement storing events (names, data; none:
// no statement) of execution ids under cond, its parameters from $5 on.
func queueEvents(b *pgx.Batch, ids, names, data []string, cond string, condArgs ...any) {
	if len(names) > 0 {
		b.Queue(streamEventsSQL(cond), append([]any{ids[0], ids[1], names, data}, condArgs...)...).
			Exec(func(pgconn.CommandTag) error { return nil })
	}
}

// insertedInto reads insertEntryReturning's row, if any, into *out,
// setting *ok when there was one (the entry went in).
func insertedInto(out *Entry, ok *bool) func(pgx.Rows) error {
	return func(rows pgx.Rows) error {
		defer rows.Close()
		if rows.Next() {
			if err := rows.Scan(insertedDest(out)...); err != nil {
				return err
			}
			*ok = true
		}
		return rows.Err()
	}
}

// found reads at most one row of a statement into *out, setting *ok when
// there was one: no row is no error, so a batch's later statements are
// read too.
func found[T any](out *T, ok *bool) func(pgx.Rows) error {
	return func(rows pgx.Rows) error {
		defer rows.Close()
		if rows.Next() {
			v, err := pgx.RowToStructByName[T](rows)
			if err != nil {
				return err
			}
			*out, *ok = v, true
		}
		return rows.Err()
	}
}

// one reads the single row of a statement into *out.
func one[T any](out *T) func(pgx.Rows) error {
	return func(rows pgx.Rows) error {
		v, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[T])
		*out = v
		return err
	}
}

// AnnounceToolCall records tc as RecordToolCall does and stores events in
// the same transaction. With started, tc is the call's start and the
// events are stored only when the record, as the upsert left it, holds
// no result (not ended, or ended by an attempt that failed): a start that
// finds the call answered by another run of it announces nothing. Ended
// records announce always.
func (s *Store) AnnounceToolCall(ctx context.Context, tc ToolCall, events []NewStreamEvent, started bool) (ToolCall, error) {
	args, err := toolCallArgs(tc)
	if err != nil {
		return ToolCall{}, err
	}
	cond := `EXISTS (SELECT 1 FROM agent_tool_call WHERE agent_execution_id = $2 AND message_id = $5::uuid AND tool_call_id = $6`
	if started {
		cond += ` AND (status NOT IN ('completed', 'error', 'rejected') OR coalesce(output ? 'error', false))`
	}
	var out ToolCall
	err = s.announced(ctx, toolCallUpsertSQL, args, one(&out), []string{args[0].(string), args[1].(string)}, events, cond+`)`, args[2], tc.ToolCallID)
	return toolCallRecorded(out, err, tc)
}

// AppendCheckpointAnnounced appends c as AppendCheckpoint does and stores
// events in the same transaction when it inserted the checkpoint: a
// repeat that finds its checkpoint recorded (ErrConflict) announces
// nothing again.
func (s *Store) AppendCheckpointAnnounced(ctx context.Context, c Checkpoint, events []NewStreamEvent) (Checkpoint, error) {
	args, err := checkpointArgs(c)
	if err != nil {
		return Checkpoint{}, err
	}
	var out Checkpoint
	err = s.announced(ctx, appendCheckpointSQL, args, one(&out), []string{args[0].(string), args[1].(string)}, events,
		`EXISTS (SELECT 1 FROM agent_checkpoint WHERE agent_execution_id = $2 AND sequence = $5 AND xmin = `+thisTx+`)`, c.Sequence)
	return checkpointAppended(ctx, s.pool, out, err, args)
}

// TransitionAnnounced is Transition storing events in the same
// transaction when the move is made by its one statement, the common
// case, and reporting whether it did (announced). A move it could not
// make in one statement (the execution at tr.To already, or at a status
// it may not leave for it, or changed meanwhile) is Transition's, and
// stores no events: the caller publishes what that move calls for.
func (s *Store) TransitionAnnounced(ctx context.Context, orgID, id string, tr Transition, events []NewStreamEvent) (e Execution, announced bool, err error) {
	op := "transition " + id
	if !tr.To.Valid() {
		return Execution{}, false, errf(op, ErrInvalid, "status %q", tr.To)
	}
	ids, err := readIDs(op, orgID, id)
	if err != nil {
		return Execution{}, false, err
	}
	err = s.announced(ctx, moveStatusSQL, moveStatusArgs(ids, anyVersion, tr), one(&e), ids, events,
		`EXISTS (SELECT 1 FROM agent_execution WHERE id = $2 AND org_id = $1 AND status = $5 AND xmin = `+thisTx+`)`, string(tr.To))
	if err == nil {
		return utcExecution(e), true, nil
	}
	if !isNoRows(err) {
		return Execution{}, false, wrap(op, err)
	}
	e, err = s.Transition(ctx, orgID, id, tr)
	return e, false, err
}

// AppendEntryAnnounced appends e as AppendEntry does and stores events
// in the same transaction when e goes in as its parent's continuation,
// the common case: a model's answer with the last of its streamed deltas.
// Otherwise (a repeat, a fork) the append takes its usual ways and the
// events are stored after it, on their own and best effort. On an error
// no event is stored: the caller may store them itself.
func (s *Store) AppendEntryAnnounced(ctx context.Context, e Entry, events []NewStreamEvent) (Entry, error) {
	out, id, err := checkEntry(e)
	if err != nil {
		return Entry{}, err
	}
	inserted := false
	err = s.announced(ctx, insertEntryReturning, entryArgs(out, id, false, writeFence(ctx)), insertedInto(&out, &inserted), []string{out.OrgID, out.ExecutionID}, events,
		`EXISTS (SELECT 1 FROM agent_entry WHERE agent_execution_id = $2 AND idempotency_key = $5 AND xmin = `+thisTx+`)`, out.IdempotencyKey)
	if err != nil {
		return Entry{}, wrap(appendEntryOp, err)
	}
	if inserted {
		out.CreatedAt = out.CreatedAt.UTC()
		return out, nil
	}
	stored, _, err := appendEntry(ctx, s.pool, e)
	if err == nil && len(events) > 0 {
		_, _ = s.AppendStreamEvents(ctx, out.OrgID, out.ExecutionID, events)
	}
	return stored, err
}

// BeginRunning reads the execution's settings as they stand (before) and
// moves it to RUNNING, storing events with the move when it makes it and
// the execution's latest checkpoint is at most seq: a segment's start,
// read, move and announcement in one round trip. moved reports whether
// this call moved it (and the events were stored). A segment begun again
// after its run went past it (a checkpoint after seq) moves the execution
// without announcing; one that finds it RUNNING, ended or CANCELLING
// moves nothing, and the caller decides from before.
func (s *Store) BeginRunning(ctx context.Context, orgID, id string, seq int, events []NewStreamEvent) (before ExecutionSettings, moved bool, err error) {
	op := "begin " + id
	ids, err := readIDs(op, orgID, id)
	if err != nil {
		return before, false, err
	}
	names, data, err := streamEventArgs(op, events)
	if err != nil {
		return before, false, err
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT status, config, current_checkpoint_seq FROM agent_execution WHERE id = $2 AND org_id = $1`, ids[0], ids[1]).Query(one(&before))
	b.Queue(moveStatusSQL, moveStatusArgs(ids, anyVersion, Transition{To: StatusRunning})...).Query(func(rows pgx.Rows) error {
		defer rows.Close()
		moved = rows.Next()
		return rows.Err()
	})
	queueEvents(b, ids, names, data, `EXISTS (SELECT 1 FROM agent_execution WHERE id = $2 AND org_id = $1 AND status = $5
			AND xmin = `+thisTx+` AND current_checkpoint_seq <= $6)`, string(StatusRunning), seq)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return ExecutionSettings{}, false, wrap(op, err)
	}
	return before, moved, nil
}

// AppendCheckpointAndWait appends c with cpEvents as
// AppendCheckpointAnnounced does and, when that inserted c, moves the
// execution to WAITING with waitEvents as TransitionAnnounced does, in
// one round trip and one transaction: a turn that ends waiting for the
// user, whose clients never see its checkpoint announced while it still
// reads RUNNING. moved reports the move. When c was not inserted (err,
// as AppendCheckpoint's) or the execution could not move in one
// statement, nothing moved and the caller moves it after, as before.
func (s *Store) AppendCheckpointAndWait(ctx context.Context, c Checkpoint, cpEvents, waitEvents []NewStreamEvent) (e Execution, moved bool, err error) {
	const op = "append checkpoint and wait"
	args, err := checkpointArgs(c)
	if err != nil {
		return Execution{}, false, err
	}
	ids := []string{args[0].(string), args[1].(string)}
	cpNames, cpData, err := streamEventArgs(op, cpEvents)
	if err != nil {
		return Execution{}, false, err
	}
	waitNames, waitData, err := streamEventArgs(op, waitEvents)
	if err != nil {
		return Execution{}, false, err
	}
	var cp Checkpoint
	var inserted bool
	b := &pgx.Batch{}
	b.Queue(appendCheckpointSQL, args...).Query(found(&cp, &inserted))
	queueEvents(b, ids, cpNames, cpData,
		`EXISTS (SELECT 1 FROM agent_checkpoint WHERE agent_execution_id = $2 AND sequence = $5 AND xmin = `+thisTx+`)`, c.Sequence)
	// The move is made only on the row version the checkpoint's insert
	// left, which that insert holds locked: the events go first, under
	// the move's own condition on that same version, so they are stored
	// exactly when it moves.
	tr := Transition{To: StatusWaiting}
	moveArgs := moveStatusArgs(ids, anyVersion, tr)
	queueEvents(b, ids, waitNames, waitData, `EXISTS (SELECT 1 FROM agent_execution WHERE id = $2 AND org_id = $1
			AND status = ANY($5) AND status <> $6 AND current_checkpoint_seq = $7 AND xmin = `+thisTx+`)`,
		moveArgs[7], string(tr.To), c.Sequence)
	b.Queue(moveStatusUpdate+` AND current_checkpoint_seq = $10 AND xmin = `+thisTx+` RETURNING `+executionCols,
		append(moveArgs, c.Sequence)...).Query(found(&e, &moved))
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return Execution{}, false, wrap(op, err)
	}
	if !inserted {
		_, err := checkpointAppended(ctx, s.pool, cp, errNoRows, args)
		return Execution{}, false, err
	}
	return utcExecution(e), moved, nil
}

// AppendToolResultAnnounced appends e, a tool call's result entry, as its
// parent's continuation, ends tc's record linked to it (tc.ResultEntryID
// is set to e's ID) and stores events, in one round trip and one
// transaction: a tool call's end, the common case. appended reports
// whether e went in here; when it did not (a repeat of its key, a parent
// continued already) nothing is written and the caller appends and
// records as usual.
func (s *Store) AppendToolResultAnnounced(ctx context.Context, e Entry, tc ToolCall, events []NewStreamEvent) (out Entry, appended bool, err error) {
	out, id, err := checkEntry(e)
	if err != nil {
		return Entry{}, false, err
	}
	if id == "" {
		// Named here, so the record's link can go in the same batch.
		id = uuid.NewString()
	}
	tc.ResultEntryID = id
	args, err := toolCallArgs(tc)
	if err != nil {
		return Entry{}, false, err
	}
	names, data, err := streamEventArgs(appendEntryOp, events)
	if err != nil {
		return Entry{}, false, err
	}
	ids := []string{out.OrgID, out.ExecutionID}
	var rec ToolCall
	var recorded bool
	b := &pgx.Batch{}
	b.Queue(insertEntryReturning, entryArgs(out, id, false, writeFence(ctx))...).Query(insertedInto(&out, &appended))
	// The record's upsert needs the entry it links to: when the insert
	// above made none, it writes nothing, and nor do the events.
	b.Queue(toolCallUpsertSQL, args...).Query(found(&rec, &recorded))
	queueEvents(b, ids, names, data, `EXISTS (SELECT 1 FROM agent_entry WHERE id = $5::uuid AND xmin = `+thisTx+`)
			AND EXISTS (SELECT 1 FROM agent_tool_call WHERE agent_execution_id = $2 AND message_id = $6::uuid
				AND tool_call_id = $7 AND result_entry_id = $5::uuid)`, id, tc.MessageID, tc.ToolCallID)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return Entry{}, false, wrap(appendEntryOp, err)
	}
	if !appended {
		return Entry{}, false, nil
	}
	out.CreatedAt = out.CreatedAt.UTC()
	if !recorded {
		// Not expected (the record's entries are the execution's), but
		// the entry is in: record the end as a call apart would.
		if _, err := s.AnnounceToolCall(ctx, tc, events, false); err != nil {
			return out, true, err
		}
	}
	return out, true, nil
}

// AppendToolResults appends es, the result entries of one answer's tool
// calls in the model's order (the first under its parent, each next one
// under the one before: PrevParent), and links each record of tcs to its
// entry, in one round trip and one transaction. appended reports whether
// every entry went in here; when not (a repeat of their keys, a parent
// continued already) the caller appends and links as usual, which takes
// what did go in as a repeat.
func (s *Store) AppendToolResults(ctx context.Context, es []Entry, tcs []ToolCall) (out []Entry, appended bool, err error) {
	const op = "append tool results"
	if len(es) != len(tcs) || len(es) == 0 {
		return nil, false, errf(op, ErrInvalid, "%d entries for %d tool calls", len(es), len(tcs))
	}
	out = make([]Entry, len(es))
	inserted := make([]bool, len(es))
	recorded := make([]bool, len(es))
	recs := make([]ToolCall, len(es))
	links := make([]ToolCall, len(es))
	b := &pgx.Batch{}
	fence := writeFence(ctx)
	for i, e := range es {
		if e.ParentID == PrevParent {
			if i == 0 {
				return nil, false, errf(op, ErrInvalid, "first entry has parent %s", PrevParent)
			}
			// Named before it is inserted: when the entry before went
			// in, this one continues it; when not, nor does this one.
			e.ParentID = out[i-1].ID
		}
		o, id, err := checkEntry(e)
		if err != nil {
			return nil, false, err
		}
		if id == "" {
			id = uuid.NewString()
		}
		o.ID = id
		out[i] = o
		b.Queue(insertEntryReturning, entryArgs(o, id, false, fence)...).Query(insertedInto(&out[i], &inserted[i]))
	}
	for i, tc := range tcs {
		// A record's link needs its entry: it writes nothing for an
		// entry that did not go in.
		tc.ResultEntryID = out[i].ID
		args, err := toolCallArgs(tc)
		if err != nil {
			return nil, false, err
		}
		links[i] = tc
		b.Queue(toolCallUpsertSQL, args...).Query(found(&recs[i], &recorded[i]))
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, false, wrap(op, err)
	}
	for i := range es {
		if !inserted[i] {
			return nil, false, nil
		}
		out[i].CreatedAt = out[i].CreatedAt.UTC()
	}
	for i, tc := range links {
		if !recorded[i] {
			// Not expected (the records' entries are the execution's),
			// but the entries are in: link as a call apart would.
			if _, err := s.RecordToolCall(ctx, tc); err != nil {
				return out, true, err
			}
		}
	}
	return out, true, nil
}
