package scripted

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/agentree/agentree/agentsdk"
)

// Name is the scripted provider's name.
const Name = "scripted"

// Model is a ModelRef for the scripted provider.
func Model(id string) agentsdk.ModelRef {
	if id == "" {
		id = "scripted-1"
	}
	return agentsdk.ModelRef{Provider: Name, ModelID: id}
}

// Turn is one scripted answer.
type Turn struct {
	Text      string
	Thinking  string
	ToolCalls []agentsdk.ToolCall
	// Delay is waited before answering (honouring ctx).
	Delay time.Duration
	// TokenDelay is waited between streamed tokens.
	TokenDelay time.Duration
	// FailTimes makes the first FailTimes calls for this turn fail with Err
	// (a retryable 503 when Err is nil).
	FailTimes int
	Err       error
	Usage     agentsdk.Usage
}

// Script picks the answer for a call: turn is the number of assistant
// messages already in the conversation.
type Script func(turn int, req agentsdk.ModelRequest) Turn

// Turns scripts a fixed list; past its end the last turn repeats.
func Turns(turns ...Turn) Script {
	return func(turn int, _ agentsdk.ModelRequest) Turn {
		if len(turns) == 0 {
			return Turn{Text: "[scripted] no script"}
		}
		if turn >= len(turns) {
			turn = len(turns) - 1
		}
		return turns[turn]
	}
}

// Provider is the scripted agentsdk.Provider.
type Provider struct {
	name   string
	script Script
	// OnCall, when set, is told of every call before it is answered.
	OnCall func(turn int, req agentsdk.ModelRequest)

	latency  Latency
	callLog  string
	hangFile string

	mu       sync.Mutex
	failures map[int]int
	calls    int
}

// New returns a scripted provider named "scripted", with the latency and
// call log the environment asks for (EnvDelay, EnvTokenDelay, EnvCallLog).
func New(script Script) *Provider {
	p := &Provider{name: Name, script: script, failures: map[int]int{}}
	p.fromEnv()
	return p
}

// Named renames the provider, so two scripted providers can stand for a
// primary model and its fallback. It returns p.
func (p *Provider) Named(name string) *Provider {
	p.name = name
	return p
}

// Name implements agentsdk.Provider.
func (p *Provider) Name() string { return p.name }

// Calls is how many calls the provider answered or failed.
func (p *Provider) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// Stream implements agentsdk.Provider.
func (p *Provider) Stream(ctx context.Context, req agentsdk.ModelRequest, onEvent agentsdk.StreamFunc) (agentsdk.ModelResponse, error) {
	turn := 0
	for _, m := range req.Messages {
		if m.Role == agentsdk.RoleAssistant {
			turn++
		}
	}
	if p.OnCall != nil {
		p.OnCall(turn, req)
	}
	t := p.script(turn, req)
	t.Delay = max(t.Delay, p.latency.Delay)
	t.TokenDelay = max(t.TokenDelay, p.latency.TokenDelay)
	p.logCall("start", turn, req)
	p.mu.Lock()
	p.calls++
	failed := p.failures[turn]
	if failed < t.FailTimes {
		p.failures[turn] = failed + 1
	}
	p.mu.Unlock()
	if failed < t.FailTimes {
		if t.Err != nil {
			return agentsdk.ModelResponse{}, t.Err
		}
		return agentsdk.ModelResponse{}, &agentsdk.ModelError{Provider: p.name, StatusCode: 503, Message: "[scripted] overloaded", Retryable: true}
	}
	if err := wait(ctx, t.Delay); err != nil {
		return agentsdk.ModelResponse{}, err
	}
	msg := agentsdk.Message{Role: agentsdk.RoleAssistant, Provider: p.name, Model: req.Model.ModelID}
	if t.Thinking != "" {
		onEvent(agentsdk.StreamEvent{Type: agentsdk.StreamThinking, Text: t.Thinking})
		msg.Content = append(msg.Content, agentsdk.Block{Type: agentsdk.BlockThinking, Thinking: t.Thinking, Signature: "scripted"})
	}
	if t.Text != "" {
		hang := p.takeHang()
		for i, tok := range tokens(t.Text) {
			if err := wait(ctx, t.TokenDelay); err != nil {
				return agentsdk.ModelResponse{}, err
			}
			onEvent(agentsdk.StreamEvent{Type: agentsdk.StreamText, Text: tok})
			if hang && i == 0 {
				p.logCall("hang", turn, req)
				<-ctx.Done()
				return agentsdk.ModelResponse{}, ctx.Err()
			}
		}
		msg.Content = append(msg.Content, agentsdk.Block{Type: agentsdk.BlockText, Text: t.Text})
	}
	for _, tc := range t.ToolCalls {
		tc := tc
		if len(tc.Arguments) == 0 {
			tc.Arguments = []byte(`{}`)
		}
		onEvent(agentsdk.StreamEvent{Type: agentsdk.StreamToolCallStart, ToolCall: &agentsdk.ToolCall{ID: tc.ID, Name: tc.Name}})
		onEvent(agentsdk.StreamEvent{Type: agentsdk.StreamToolCallEnd, ToolCall: &tc})
		msg.Content = append(msg.Content, agentsdk.Block{Type: agentsdk.BlockToolCall, ToolCall: &tc})
	}
	msg.StopReason = agentsdk.StopEndTurn
	if len(t.ToolCalls) > 0 {
		msg.StopReason = agentsdk.StopToolUse
	}
	u := t.Usage
	if u.Input == 0 && u.Output == 0 {
		u = agentsdk.Usage{Input: int64(len(req.Messages)) * 10, Output: int64(len(t.Text)/4 + 1)}
	}
	msg.Usage = &u
	p.logCall("end", turn, req)
	return agentsdk.ModelResponse{Message: msg}, nil
}

// tokens splits text into word-sized tokens that join back to it.
func tokens(text string) []string {
	var out []string
	for len(text) > 0 {
		i := strings.IndexByte(text[1:], ' ')
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
