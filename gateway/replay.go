package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// replayBudget bounds the replay an explain model reads, in tokens (4
// bytes a token, agentsdk.EstimateTokens): an execution of any length is
// explained for at most this much input. Past it the replay keeps its
// first and last decision points and says how many it left out between.
const replayBudget = 8000

// replayQuote bounds each quoted field of a decision in the replay (its
// reasoning, arguments and outcome), in characters.
const replayQuote = 300

// explainQuestions are seed 004 §10's questions.
const explainQuestions = `Analyze this AI agent's execution and explain, in Markdown:
1. What was the agent trying to accomplish?
2. What key decisions did it make?
3. Were there any mistakes or suboptimal choices?
4. What could have been done differently?`

// replayed is a replay built for an explain model.
type replayed struct {
	prompt    string
	tokens    int
	decisions int
	truncated bool
}

// replay is the compact replay of the execution up to its leaf that an
// explain model reads: the task, the outcome, the usage and one line per
// decision point (ListDecisionPoints' points, quoted briefly), bounded by
// replayBudget.
func (s *service) replay(ctx context.Context, cs conversationStore, ex entrystore.Execution) (replayed, error) {
	var head strings.Builder
	head.WriteString(explainQuestions)
	fmt.Fprintf(&head, "\n\n## Execution\nid %s, agent kind %s, status %s", ex.ID, ex.Kind, ex.Status)
	if ex.StopReason != "" {
		fmt.Fprintf(&head, ", stop reason %s", ex.StopReason)
	}
	if ex.Error != "" {
		fmt.Fprintf(&head, "\nerror: %s", quote(ex.Error, replayQuote))
	}
	first, _, err := cs.PathPage(ctx, ex.OrgID, ex.ID, ex.LeafEntryID, -1, 1, 0, string(agentsdk.EntryMessage))
	if err != nil {
		return replayed{}, err
	}
	if len(first) > 0 {
		if m, err := decodeMessage(first[0]); err == nil {
			fmt.Fprintf(&head, "\n\n## Task (the first %s message)\n%s", m.Role, quote(m.Text(), 4*replayQuote))
		}
	}
	lines, err := cs.ExecutionUsage(ctx, ex.OrgID, ex.ID)
	if err != nil {
		return replayed{}, err
	}
	u := toUsage(lines).Total
	fmt.Fprintf(&head, "\n\n## Usage\n%d model calls, %d input and %d output tokens, $%.4f", u.Calls, u.InputTokens, u.OutputTokens, u.Cost)

	var points []string
	var last *pb.DecisionPoint
	err = s.walkDecisions(ctx, cs, ex, decisionsCursor{Leaf: ex.LeafEntryID, Depth: -1}, func(_ entrystore.Entry, _ int, d *pb.DecisionPoint) bool {
		points = append(points, decisionLine(d))
		last = d
		return true
	}, decisionFilter{})
	if err != nil {
		return replayed{}, err
	}
	var tail strings.Builder
	if last != nil && last.Kind == decisionStop {
		fmt.Fprintf(&tail, "\n\n## Final answer\n%s", last.Reasoning)
	}
	// Keep the first and the last points that fit: how a run starts and
	// how it ends say most about it.
	left := replayBudget - agentsdk.EstimateTokens([]byte(head.String()+tail.String())) - 50
	keepHead, keepTail := fit(points, left)
	var b strings.Builder
	b.WriteString(head.String())
	fmt.Fprintf(&b, "\n\n## Decision points (%d)\n", len(points))
	for _, p := range points[:keepHead] {
		b.WriteString(p)
	}
	dropped := len(points) - keepHead - keepTail
	if dropped > 0 {
		fmt.Fprintf(&b, "[%d decision points left out here to fit the replay in %d tokens]\n", dropped, replayBudget)
	}
	for _, p := range points[len(points)-keepTail:] {
		b.WriteString(p)
	}
	b.WriteString(tail.String())
	out := replayed{prompt: b.String(), decisions: len(points), truncated: dropped > 0}
	out.tokens = agentsdk.EstimateTokens([]byte(out.prompt))
	return out, nil
}

// fit is how many of lines, from the start and from the end, fit in
// budget tokens together, taken alternately.
func fit(lines []string, budget int) (head, tail int) {
	for head+tail < len(lines) {
		i := head
		if (head+tail)%2 == 1 {
			i = len(lines) - 1 - tail
		}
		n := agentsdk.EstimateTokens([]byte(lines[i]))
		if n > budget {
			break
		}
		budget -= n
		if i == head {
			head++
		} else {
			tail++
		}
	}
	return head, tail
}

// decisionLine is one decision point in the replay.
func decisionLine(d *pb.DecisionPoint) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- step %d, %s", d.Step, d.Kind)
	if d.ToolName != "" {
		args, _ := json.Marshal(d.Arguments)
		fmt.Fprintf(&b, " %s %s", d.ToolName, quote(string(args), replayQuote))
	}
	if d.Kind == decisionStop {
		fmt.Fprintf(&b, " (%s)", d.StopReason)
	}
	if o := d.Outcome; o != nil {
		fmt.Fprintf(&b, " → %s", o.Status)
		if o.Excerpt != "" {
			fmt.Fprintf(&b, ": %s", quote(o.Excerpt, replayQuote))
		}
		if a := o.Approval; a != nil && a.Reason != "" {
			fmt.Fprintf(&b, " (reason: %s)", quote(a.Reason, replayQuote))
		}
	}
	if d.Reasoning != "" && d.Kind != decisionApproval {
		fmt.Fprintf(&b, "\n  reasoning (%s): %s", d.ReasoningSource, quote(d.Reasoning, replayQuote))
	}
	b.WriteString("\n")
	return b.String()
}

// quote is s on one line, cut to n characters.
func quote(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if q, cut := bounded(s, n); cut {
		return q + "…"
	}
	return s
}

// decodeMessage is a message entry's message.
func decodeMessage(e entrystore.Entry) (agentsdk.Message, error) {
	var m agentsdk.Message
	err := json.Unmarshal(e.Content, &m)
	return m, err
}
