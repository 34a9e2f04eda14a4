package customagent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentree/agentree/agentsdk"
)

// Kind is the approval agent's kind and Temporal workflow type.
const Kind = "approval-agent"

// The signals a reviewer sends; each carries a Decision.
const (
	SignalApprove = "approve"
	SignalReject  = "reject"
)

// Signals are the names the gateway must accept for this agent: a
// gateway refuses a signal name it was not told of.
var Signals = []string{SignalApprove, SignalReject}

// Decision is the value of an approve or reject signal.
type Decision struct {
	By   string `json:"by"`
	Note string `json:"note,omitempty"`
}

// Settings are the agent's own configuration, in Config.Agent.
type Settings struct {
	// MaxDrafts is how many drafts may be rejected before the execution
	// fails; default 3.
	MaxDrafts int `json:"maxDrafts,omitempty"`
}

// DefaultMaxDrafts is Settings.MaxDrafts' default.
const DefaultMaxDrafts = 3

// Stop reasons and waits the agent reports.
const (
	StopApproved = "approved"
	WaitApproval = "approval"
)

// state is the agent's own state, saved in every checkpoint: a count and
// an entry ID, never the draft itself (that is in the store).
type state struct {
	Drafts  int    `json:"drafts"`
	DraftID string `json:"draftId,omitempty"`
}

// Agent is the approval agent.
type Agent struct{}

// New returns the approval agent.
func New() *Agent { return &Agent{} }

// Kind implements agentsdk.Agent.
func (*Agent) Kind() string { return Kind }

// RunSegment implements agentsdk.Agent. Like every agent it decides from
// the leaf and its state alone, so any segment can be restarted: a user
// message at the leaf (the request, or a rejection's feedback) asks for a
// draft; a draft at the leaf awaits a decision.
func (*Agent) RunSegment(ctx agentsdk.Context) (agentsdk.Outcome, error) {
	set, err := settings(ctx.Config())
	if err != nil {
		return agentsdk.Fail(err.Error()), nil
	}
	var st state
	if err := ctx.State().GetCustom(&st); err != nil {
		return agentsdk.Outcome{}, fmt.Errorf("approval: state: %w", err)
	}
	leaf := ctx.Leaf()
	if leaf == nil {
		return agentsdk.Fail("nothing to draft from"), nil
	}
	if leaf.Role != agentsdk.RoleAssistant {
		return draft(ctx, &st)
	}
	// The first decision received wins; later ones stay pending, unread.
	for _, s := range ctx.Signals() {
		switch s.Name {
		case SignalApprove:
			return approve(ctx, s, st)
		case SignalReject:
			return reject(ctx, s, st, set)
		}
	}
	// Woken by a signal that is no decision: wait on.
	return awaitDecision(), nil
}

func awaitDecision() agentsdk.Outcome {
	return agentsdk.Wait(WaitApproval, SignalApprove, SignalReject)
}

// draft asks the model for a draft and waits for the reviewer.
func draft(ctx agentsdk.Context, st *state) (agentsdk.Outcome, error) {
	res, err := ctx.CallModel(agentsdk.ModelCall{TurnID: fmt.Sprintf("draft-%d", st.Drafts+1)})
	if err != nil {
		return agentsdk.Outcome{}, err
	}
	ctx.State().Turn++
	ctx.State().AddUsage(res.Model, res.Usage)
	if len(res.Entry.ToolCalls) > 0 {
		// No tools are offered; a tool call left unanswered would make the
		// next model call invalid, so stop here.
		return agentsdk.Fail("the model asked for a tool; the approval agent has none"), nil
	}
	st.Drafts++
	st.DraftID = res.Entry.ID
	if err := ctx.State().SetCustom(st); err != nil {
		return agentsdk.Outcome{}, fmt.Errorf("approval: state: %w", err)
	}
	if err := ctx.StreamData(map[string]any{"draft": st.Drafts, "entryId": st.DraftID}); err != nil {
		return agentsdk.Outcome{}, err
	}
	return awaitDecision(), nil
}

// approve records the approval and completes. The execution's output is
// the approval entry; the approved draft is the entry before it (and
// DraftID in the state), announced on the stream too.
func approve(ctx agentsdk.Context, s agentsdk.Signal, st state) (agentsdk.Outcome, error) {
	d, err := decision(ctx, s)
	if err != nil {
		return agentsdk.Outcome{}, err
	}
	if err := consume(ctx, s, fmt.Sprintf("Approved by %s.%s", d.By, withNote(d.Note))); err != nil {
		return agentsdk.Outcome{}, err
	}
	if err := ctx.StreamData(map[string]any{"approved": st.DraftID, "by": d.By}); err != nil {
		return agentsdk.Outcome{}, err
	}
	return agentsdk.Complete(StopApproved), nil
}

// reject records the rejection as the feedback for the next draft, which
// the next segment writes; past MaxDrafts it gives up.
func reject(ctx agentsdk.Context, s agentsdk.Signal, st state, set Settings) (agentsdk.Outcome, error) {
	d, err := decision(ctx, s)
	if err != nil {
		return agentsdk.Outcome{}, err
	}
	if err := consume(ctx, s, fmt.Sprintf("Rejected by %s.%s Please revise the draft.", d.By, withNote(d.Note))); err != nil {
		return agentsdk.Outcome{}, err
	}
	if st.Drafts >= set.MaxDrafts {
		return agentsdk.Fail(fmt.Sprintf("all %d drafts were rejected", st.Drafts)), nil
	}
	return agentsdk.Continue(), nil
}

// decision reads a signal's value from the store's inbox: only the
// signal's ID and name travel through Temporal.
func decision(ctx agentsdk.Context, s agentsdk.Signal) (Decision, error) {
	var d Decision
	if err := ctx.SignalValue(s, &d); err != nil {
		return d, fmt.Errorf("approval: read %s signal: %w", s.Name, err)
	}
	if strings.TrimSpace(d.By) == "" {
		d.By = "someone"
	}
	return d, nil
}

// consume appends the decision as a user message and marks the signal
// consumed, in one step: a restarted segment neither loses nor repeats it.
func consume(ctx agentsdk.Context, s agentsdk.Signal, text string) error {
	msg := agentsdk.TextMessage(agentsdk.RoleUser, text)
	_, err := ctx.ConsumeSignal(s, agentsdk.NewEntry{Type: agentsdk.EntryMessage, Message: &msg})
	return err
}

func withNote(note string) string {
	if note = strings.TrimSpace(note); note != "" {
		return " " + note
	}
	return ""
}

// settings reads the agent's configuration. The runtime does not know its
// shape, so the agent checks it, and fails at once on a bad one.
func settings(cfg agentsdk.Config) (Settings, error) {
	var s Settings
	if len(cfg.Agent) > 0 {
		if err := json.Unmarshal(cfg.Agent, &s); err != nil {
			return s, fmt.Errorf("approval: config.agent: %v", err)
		}
	}
	if s.MaxDrafts < 0 {
		return s, fmt.Errorf("approval: config.agent.maxDrafts must not be negative")
	}
	if s.MaxDrafts == 0 {
		s.MaxDrafts = DefaultMaxDrafts
	}
	return s, nil
}
