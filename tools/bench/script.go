package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// ToolName is the one tool both systems offer the model.
const ToolName = "fetch"

// plan is what one benchmark conversation asks of the scripted model. It
// rides in the first line of the first user message, so every worker
// process, and both systems, answer a given step the same way.
type plan struct {
	ID string
	// Calls is the model calls of each user turn: the first Calls-1 ask
	// for tool calls, the last answers.
	Calls     int
	ToolBytes int
	// Turns is the user turns of a multi-turn conversation (0 or 1: one).
	Turns int
	// Tools is the tool calls each tool-calling answer asks for (0: one).
	Tools int
	// ModelMs is each model call's time: it waits, then streams Tokens
	// words of text TokenMs apart (ModelMs includes them).
	ModelMs, Tokens, TokenMs int
	// ToolMs is each tool call's time.
	ToolMs int
	// Random makes the tool outputs and the first message's padding
	// random words, which compression cannot shrink, rather than a
	// repeated phrase.
	Random bool
}

const planPrefix = "[bench plan]"

// prompt is the plan's first user message, padded to size bytes.
func (p plan) prompt(size int) string {
	head := fmt.Sprintf("%s id=%s calls=%d tool_bytes=%d turns=%d tools=%d model_ms=%d tokens=%d token_ms=%d tool_ms=%d random=%t\n",
		planPrefix, p.ID, p.Calls, p.ToolBytes, p.Turns, p.Tools, p.ModelMs, p.Tokens, p.TokenMs, p.ToolMs, p.Random)
	if p.Random {
		return head + randomWords(size-len(head), 0)
	}
	return head + filler("The conversation so far. ", size-len(head))
}

// readPlan finds the plan in a conversation's first message.
func readPlan(msgs []agentsdk.Message) (plan, error) {
	var p plan
	if len(msgs) == 0 || len(msgs[0].Content) == 0 {
		return p, fmt.Errorf("bench: the conversation has no plan")
	}
	head, _, _ := strings.Cut(msgs[0].Content[0].Text, "\n")
	rest, ok := strings.CutPrefix(head, planPrefix+" ")
	if !ok {
		return p, fmt.Errorf("bench: no plan in %q", head)
	}
	ints := map[string]*int{"calls": &p.Calls, "tool_bytes": &p.ToolBytes, "turns": &p.Turns, "tools": &p.Tools,
		"model_ms": &p.ModelMs, "tokens": &p.Tokens, "token_ms": &p.TokenMs, "tool_ms": &p.ToolMs}
	for _, f := range strings.Fields(rest) {
		k, v, _ := strings.Cut(f, "=")
		var err error
		switch {
		case k == "id":
			p.ID = v
		case k == "random":
			p.Random, err = strconv.ParseBool(v)
		case ints[k] != nil:
			*ints[k], err = strconv.Atoi(v)
		default:
			err = fmt.Errorf("unknown field %q", k)
		}
		if err != nil {
			return p, fmt.Errorf("bench: read plan %q: %w", head, err)
		}
	}
	if p.ID == "" || p.Calls < 1 {
		return p, fmt.Errorf("bench: read plan %q: no id or calls", head)
	}
	return p, nil
}

// turn is the scripted answer to step (the assistant messages so far):
// the step's place in its user turn decides whether it asks for tools.
// least is the least delay of every answer.
func (p plan) turn(step int, least time.Duration) scripted.Turn {
	k := min(step, p.Calls-1)
	if p.Turns > 1 {
		k = step % p.Calls
	}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	t := scripted.Turn{Delay: max(least, ms(p.ModelMs-p.Tokens*p.TokenMs)), TokenDelay: ms(p.TokenMs)}
	if p.Tokens > 0 {
		t.Text = randomWordsN(p.Tokens, uint64(step))
	}
	if k >= p.Calls-1 {
		if t.Text == "" {
			t.Text = fmt.Sprintf("Done after %d model calls.", step+1)
		}
		return t
	}
	for i := range max(p.Tools, 1) {
		id := fmt.Sprintf("call_%d", step)
		if i > 0 {
			id += fmt.Sprintf("_%d", i)
		}
		args := fmt.Sprintf(`{"step":%d,"i":%d,"bytes":%d,"ms":%d,"random":%t}`, step, i, p.ToolBytes, p.ToolMs, p.Random)
		t.ToolCalls = append(t.ToolCalls, agentsdk.ToolCall{ID: id, Name: ToolName, Arguments: []byte(args)})
	}
	return t
}

// modelTime is what the scripted model takes per call, and firstToken
// how long until its first token.
func (p plan) modelTime(least time.Duration) time.Duration {
	t := p.turn(0, least)
	return t.Delay + time.Duration(p.Tokens)*t.TokenDelay
}

func (p plan) firstToken(least time.Duration) time.Duration {
	t := p.turn(0, least)
	return t.Delay + t.TokenDelay
}

// filler is n bytes of text made of phrase, with nothing JSON escapes.
func filler(phrase string, n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(phrase, n/len(phrase)+1)[:n]
}

// randomWords is n bytes of random lower-case words, the same for a seed:
// text that compresses about as little as text can (nothing JSON escapes).
func randomWords(n int, seed uint64) string {
	if n <= 0 {
		return ""
	}
	r := rand.New(rand.NewPCG(seed, 0x62656e6368))
	var b strings.Builder
	b.Grow(n + 10)
	for b.Len() < n {
		for range 2 + r.IntN(8) {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		b.WriteByte(' ')
	}
	return b.String()[:n]
}

// randomWordsN is n random words, space-separated: n tokens as the
// scripted model streams them.
func randomWordsN(n int, seed uint64) string {
	// A word and its space take 3 to 10 bytes: n*10+10 bytes hold n whole.
	words := strings.Fields(randomWords(n*10+10, seed|1<<40))
	return strings.Join(words[:n], " ")
}

// recorder learns of every model call a worker answers: the step (the
// number of assistant messages before it) and when it began.
type recorder func(planID string, step int, at time.Time)

// newModel is the scripted model of every scenario, answering as each
// conversation's plan says (plan.turn). delay is the least wait per call.
func newModel(delay time.Duration, rec recorder) *scripted.Provider {
	m := scripted.New(func(step int, req agentsdk.ModelRequest) scripted.Turn {
		p, err := readPlan(req.Messages)
		if err != nil {
			return scripted.Turn{Text: "[bench] " + err.Error()}
		}
		return p.turn(step, delay)
	})
	m.OnCall = func(step int, req agentsdk.ModelRequest) {
		if p, err := readPlan(req.Messages); err == nil && rec != nil {
			rec(p.ID, step, time.Now())
		}
	}
	return m
}

// fetchArgs are the tool's arguments.
type fetchArgs struct {
	Step   int  `json:"step"`
	I      int  `json:"i"`
	Bytes  int  `json:"bytes"`
	Ms     int  `json:"ms"`
	Random bool `json:"random"`
}

// newTool returns the fetch tool: it takes as long and its output is as
// many bytes as asked. block, when set, is called first and may hold the
// call until ctx ends.
func newTool(block func(ctx context.Context, step int)) *agentsdk.Tool {
	return agentsdk.NewTool(ToolName, "Fetches a document of the given size.",
		func(ctx context.Context, _ agentsdk.ToolInvocation, a fetchArgs) (string, error) {
			if block != nil {
				block(ctx, a.Step)
			}
			if a.Ms > 0 {
				t := time.NewTimer(time.Duration(a.Ms) * time.Millisecond)
				defer t.Stop()
				select {
				case <-ctx.Done():
				case <-t.C:
				}
			}
			head := fmt.Sprintf("document %d\n", a.Step)
			if a.I > 0 {
				head = fmt.Sprintf("document %d.%d\n", a.Step, a.I)
			}
			if a.Random {
				return head + randomWords(a.Bytes-len(head), uint64(a.Step)<<8|uint64(a.I)), ctx.Err()
			}
			return head + filler("Fetched text. ", a.Bytes-len(head)), ctx.Err()
		})
}

// callLog is an in-process recorder: the model calls of each plan, by step.
type callLog struct {
	mu    sync.Mutex
	calls map[string]map[int]time.Time
}

func newCallLog() *callLog { return &callLog{calls: map[string]map[int]time.Time{}} }

func (l *callLog) record(planID string, step int, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.calls[planID] == nil {
		l.calls[planID] = map[int]time.Time{}
	}
	if _, seen := l.calls[planID][step]; !seen {
		l.calls[planID][step] = at
	}
}

// at is when step of a plan began, if it did.
func (l *callLog) at(planID string, step int) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.calls[planID][step]
	return t, ok
}

// intervals are the times between the starts of consecutive model calls of
// a plan: one model call and the tool call it asked for, plus whatever the
// system does in between.
func (l *callLog) intervals(planID string) []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return gaps(l.calls[planID])
}

// gaps turns step start times into the intervals between consecutive steps.
func gaps(starts map[int]time.Time) []time.Duration {
	var out []time.Duration
	for step := 1; ; step++ {
		cur, ok1 := starts[step]
		prev, ok2 := starts[step-1]
		if !ok1 || !ok2 {
			return out
		}
		out = append(out, cur.Sub(prev))
	}
}
