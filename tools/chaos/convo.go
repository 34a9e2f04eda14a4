package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/agentree/agentree/agentsdk/event"
	research "github.com/agentree/agentree/agentsdk/tools/demo"
)

// questions are what the conversations ask; each is answered from the
// research sample's notes.
var questions = []string{
	research.Prompt,
	"Why does a workflow continue-as-new after every checkpoint?",
	"How are large payloads kept out of Temporal history?",
	"What makes a retried model call idempotent?",
	"How does the react loop decide its next step?",
}

// message is one user message a conversation sends: the first prompt
// (index 0) or a follow-up.
type message struct {
	Tag   string // unique in the run, carried in the text
	Text  string
	Acked bool // a 2xx was received
	// AckedAt is when the 2xx arrived (failover.go dates losses by it).
	AckedAt time.Time
	// Tries is how many POSTs it took; Duplicated, that it was POSTed a
	// second time after its 2xx, with the same Idempotency-Key.
	Tries      int
	Duplicated bool
}

// conversation is one execution driven over REST: multi-turn, or a
// one-shot probe that is sent a message while it writes its final answer.
type conversation struct {
	Index    int
	Tag      string
	OneShot  bool
	ExecID   string
	Messages []*message
	Follower *follower
	rng      *rand.Rand
	Answered bool // the last message was answered in time
	// Closed: its client cancelled it once its last message was answered
	// (the soak, soak.go, so executions end as they start).
	Closed bool
	Err    string
	// ambiguousCalls: a duplicated create shares this conversation's
	// model calls' names, so the rerun check skips it.
	ambiguousCalls bool
}

func (c *conversation) key(m *message) string { return "chaos-" + m.Tag }

// driver runs the conversations.
type driver struct {
	cfg    config
	api    *api
	runTag string
}

// chance is a random number in [0, 1) from the conversation's own seeded
// source, so its choices do not depend on the other conversations'.
func (c *conversation) chance() float64 { return c.rng.Float64() }

// pause is a random duration in [0, upTo).
func (c *conversation) pause(upTo time.Duration) time.Duration {
	return time.Duration(c.chance() * float64(upTo))
}

func (d *driver) newMessage(c *conversation, i int) *message {
	tag := fmt.Sprintf("%s-%s-m%d", d.runTag, c.Tag, i)
	q := questions[(c.Index+i)%len(questions)]
	m := &message{Tag: tag, Text: fmt.Sprintf("[%s] %s", tag, q)}
	c.Messages = append(c.Messages, m)
	return m
}

// converse creates the execution, follows its stream, and sends each
// follow-up once the previous message is answered. streamCtx outlives it:
// the stream is followed until the checks are done.
func (d *driver) converse(ctx, streamCtx context.Context, c *conversation, wg *sync.WaitGroup, live *sync.Map) {
	if err := sleepCtx(ctx, c.pause(d.cfg.Ramp)); err != nil {
		c.Err = err.Error()
		return
	}
	if err := d.create(ctx, c); err != nil {
		c.Err = fmt.Sprintf("create: %v", err)
		return
	}
	// Its messages' tags begin with this: the model-call log names calls
	// by them.
	live.Store(c.ExecID, "["+d.runTag+"-"+c.Tag+"-")
	defer live.Delete(c.ExecID)
	c.Follower = newFollower(d.api, c.ExecID)
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.Follower.run(streamCtx)
	}()
	if c.OneShot {
		d.interrupt(ctx, c)
		return
	}
	for i := 1; i <= d.cfg.FollowUps; i++ {
		if err := d.awaitAnswer(ctx, c, c.Messages[i-1]); err != nil {
			c.Err = fmt.Sprintf("message %d: %v", i-1, err)
			return
		}
		if err := sleepCtx(ctx, c.pause(d.cfg.Think)); err != nil {
			c.Err = err.Error()
			return
		}
		if err := d.send(ctx, c, d.newMessage(c, i)); err != nil {
			c.Err = fmt.Sprintf("signal %d: %v", i, err)
			return
		}
	}
	if err := d.awaitAnswer(ctx, c, c.Messages[len(c.Messages)-1]); err != nil {
		c.Err = fmt.Sprintf("message %d: %v", len(c.Messages)-1, err)
		return
	}
	c.Answered = true
}

// create starts the conversation's execution; with -duplicate-rate's
// chance it POSTs the create again with the same Idempotency-Key.
func (d *driver) create(ctx context.Context, c *conversation) error {
	m := d.newMessage(c, 0)
	mode := "multi-turn"
	if c.OneShot {
		mode = "one-shot"
	}
	body := map[string]any{
		"kind": "react-agent", "systemPrompt": research.SystemPrompt, "userPrompt": m.Text,
		"models": []map[string]string{{"provider": "scripted", "modelId": "scripted-1"}},
		"tools":  []string{research.SearchNotesTool, research.FetchNoteTool, research.WordCountTool},
		"config": map[string]any{"mode": mode}, "metadata": map[string]any{"chaos": c.Tag, "run": d.runTag},
	}
	var ex struct {
		ID string `json:"id"`
	}
	tries, err := d.api.do(ctx, "POST", "/agent-executions", c.key(m), body, &ex)
	m.Tries = tries
	if err != nil {
		return err
	}
	m.Acked, m.AckedAt, c.ExecID = true, time.Now(), ex.ID
	if c.chance() < d.cfg.DuplicateRate {
		m.Duplicated = true
		if _, err := d.api.do(ctx, "POST", "/agent-executions", c.key(m), body, nil); err != nil {
			return fmt.Errorf("again: %w", err)
		}
	}
	return nil
}

// send POSTs a user message as a signal, retrying until a 2xx; with
// -duplicate-rate's chance it POSTs it again with the same
// Idempotency-Key.
func (d *driver) send(ctx context.Context, c *conversation, m *message) error {
	sig := map[string]any{"signalName": "userMessage", "signalValue": map[string]any{"text": m.Text}}
	path := "/agent-executions/" + url.PathEscape(c.ExecID) + "/signal"
	tries, err := d.api.do(ctx, "POST", path, c.key(m), sig, nil)
	m.Tries = tries
	if err != nil {
		return err
	}
	m.Acked, m.AckedAt = true, time.Now()
	if c.chance() < d.cfg.DuplicateRate {
		m.Duplicated = true
		if _, err := d.api.do(ctx, "POST", path, c.key(m), sig, nil); err != nil {
			return fmt.Errorf("again: %w", err)
		}
	}
	return nil
}

// interrupt is the one-shot probe (issue 19, defect 3): once the last
// tool call has completed, it sends a message at a random moment of the
// final model call. A 2xx means the message will be processed; a 409
// refuses it before it is stored. Then it waits for the execution to end.
func (d *driver) interrupt(ctx context.Context, c *conversation) {
	for i := 1; c.Follower.seen(event.NameTaskCompleted) < 3; i++ {
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			c.Err = "the tools never completed: " + err.Error()
			return
		}
		// Stream events are not the record: one whose write failed (a
		// full disk, -resources) is never sent, and the execution may
		// end without the probe seeing its tools complete.
		if i%50 == 0 {
			var ex struct {
				Status string `json:"status"`
			}
			if _, err := d.api.do(ctx, "GET", "/agent-executions/"+url.PathEscape(c.ExecID), "", nil, &ex); err == nil && ex.Status == "COMPLETED" {
				c.Answered, c.Err = true, "ended before its tools' task.completed events were all received"
				return
			}
		}
	}
	if err := sleepCtx(ctx, c.pause(d.cfg.ModelDelay+time.Second)); err != nil {
		c.Err = err.Error()
		return
	}
	m := d.newMessage(c, 1)
	sig := map[string]any{"signalName": "userMessage", "signalValue": map[string]any{"text": m.Text}}
	path := "/agent-executions/" + url.PathEscape(c.ExecID) + "/signal"
	tries, err := d.api.doRefusable(ctx, "POST", path, c.key(m), sig)
	m.Tries = tries
	switch {
	case err == nil:
		m.Acked, m.AckedAt = true, time.Now()
	case !errors.Is(err, errRefused):
		c.Err = fmt.Sprintf("signal: %v", err)
		return
	}
	for {
		var ex struct {
			Status string `json:"status"`
		}
		if _, err := d.api.do(ctx, "GET", "/agent-executions/"+url.PathEscape(c.ExecID), "", nil, &ex); err != nil {
			c.Err = err.Error()
			return
		}
		switch ex.Status {
		case "COMPLETED", "FAILED", "CANCELLED", "WAITING":
			c.Answered = ex.Status == "COMPLETED"
			return
		}
		select {
		case <-ctx.Done():
			c.Err = "not ended: " + ctx.Err().Error()
			return
		case <-time.After(time.Second):
		}
	}
}

// restMessage is the part of the API's Message the driver reads.
type restMessage struct {
	Role    string `json:"role"`
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ToolCall any    `json:"toolCall"`
	} `json:"content"`
}

func (m restMessage) text() string {
	var b strings.Builder
	for _, c := range m.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func (m restMessage) hasToolCalls() bool {
	for _, c := range m.Content {
		if c.ToolCall != nil || c.Type == "tool_call" {
			return true
		}
	}
	return false
}

// errGaveUp ends a wait whose execution ended.
var errGaveUp = errors.New("the execution ended")

// awaitAnswer waits until the execution waits for input with an answer to
// m at the end of its path. It checks on every agent.waiting and every 3 s.
func (d *driver) awaitAnswer(ctx context.Context, c *conversation, m *message) error {
	for {
		done, err := d.answered(ctx, c, m)
		if done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not answered: %w", ctx.Err())
		case <-c.Follower.wake:
		case <-time.After(3 * time.Second):
		}
	}
}

func (d *driver) answered(ctx context.Context, c *conversation, m *message) (bool, error) {
	var ex struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if _, err := d.api.do(ctx, "GET", "/agent-executions/"+url.PathEscape(c.ExecID), "", nil, &ex); err != nil {
		return false, err
	}
	switch ex.Status {
	case "WAITING":
	case "FAILED", "COMPLETED", "CANCELLED":
		return false, fmt.Errorf("%w %s: %s", errGaveUp, ex.Status, ex.Error)
	default:
		return false, nil
	}
	msgs, err := d.messages(ctx, c.ExecID)
	if err != nil {
		return false, err
	}
	lastUser := -1
	for i, msg := range msgs {
		if msg.Role == "user" {
			lastUser = i
		}
	}
	if lastUser < 0 || !strings.Contains(msgs[lastUser].text(), "["+m.Tag+"]") {
		return false, nil
	}
	last := msgs[len(msgs)-1]
	return last.Role == "assistant" && !last.hasToolCalls(), nil
}

// messages reads the execution's active path over REST, every page.
func (d *driver) messages(ctx context.Context, execID string) ([]restMessage, error) {
	var out []restMessage
	cursor := ""
	for {
		var page struct {
			Messages   []restMessage `json:"messages"`
			NextCursor string        `json:"nextCursor"`
		}
		path := "/agent-executions/" + url.PathEscape(execID) + "/messages?pageSize=500&cursor=" + url.QueryEscape(cursor)
		if _, err := d.api.do(ctx, "GET", path, "", nil, &page); err != nil {
			return nil, err
		}
		out = append(out, page.Messages...)
		if page.NextCursor == "" {
			return out, nil
		}
		cursor = page.NextCursor
	}
}
