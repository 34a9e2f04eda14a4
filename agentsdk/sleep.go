package agentsdk

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ToolSleep is the built-in tool through which a model waits: "check the
// deploy again in two hours". Like spawn_agents it runs in the agent's
// workflow, not as an activity: the agent (the react agent does) answers
// it with Context.Sleep, which ends the segment WAITING on a durable
// timer (reason WaitTimer) and answers the call when it wakes.
const ToolSleep = "sleep"

// WaitTimer is the reason an execution waits on a timer (Outcome.WakeAt).
const WaitTimer = "timer"

// DefaultMaxSleep is the longest sleep a worker allows unless its
// operator says otherwise.
const DefaultMaxSleep = 24 * time.Hour

// SleepArgs are sleep's arguments: Seconds or Until, not both.
type SleepArgs struct {
	Seconds float64 `json:"seconds,omitempty" jsonschema:"how long to sleep, in seconds (give this or until)"`
	Until   string  `json:"until,omitempty" jsonschema:"when to wake, an RFC 3339 time such as 2026-01-02T15:04:05Z (give this or seconds)"`
	// WakeOnMessage lets a user's message end the sleep early; without
	// it a message waits until the agent wakes.
	WakeOnMessage bool `json:"wakeOnMessage,omitempty" jsonschema:"wake early when the user sends a message (default false: a message waits until the sleep ends)"`
}

// WakeAt is when a sleep asked for at now wakes, or why it may not: the
// error is worded for the model, which reads it as the call's result.
// maxSleep <= 0 means DefaultMaxSleep.
func (a SleepArgs) WakeAt(now time.Time, maxSleep time.Duration) (time.Time, error) {
	if maxSleep <= 0 {
		maxSleep = DefaultMaxSleep
	}
	var at time.Time
	switch {
	case a.Until != "" && a.Seconds != 0:
		return time.Time{}, errors.New("give seconds or until, not both")
	case a.Until != "":
		t, err := time.Parse(time.RFC3339, a.Until)
		if err != nil {
			return time.Time{}, fmt.Errorf("until %q is not an RFC 3339 time such as 2026-01-02T15:04:05Z", a.Until)
		}
		if !t.After(now) {
			return time.Time{}, fmt.Errorf("until %s is not in the future (it is now %s)", a.Until, now.UTC().Format(time.RFC3339))
		}
		at = t
	case a.Seconds > 0:
		if a.Seconds > maxSleep.Seconds() {
			return time.Time{}, fmt.Errorf("seconds %g is longer than the longest sleep allowed, %s", a.Seconds, maxSleep)
		}
		at = now.Add(time.Duration(a.Seconds * float64(time.Second)))
	case a.Seconds < 0:
		return time.Time{}, fmt.Errorf("seconds %g is negative: give how long to sleep", a.Seconds)
	default:
		return time.Time{}, errors.New("give seconds (a positive number) or until (an RFC 3339 time)")
	}
	if at.Sub(now) > maxSleep {
		return time.Time{}, fmt.Errorf("until %s is further away than the longest sleep allowed, %s", a.Until, maxSleep)
	}
	return at.UTC(), nil
}

// SleepState is a sleep in progress, kept in State across the wait so a
// continued-as-new run re-arms its timer.
type SleepState struct {
	ToolCallID    string    `json:"toolCallId"`
	WakeAt        time.Time `json:"wakeAt"`
	WakeOnMessage bool      `json:"wakeOnMessage,omitempty"`
}

// errSleepInWorkflow: sleep is answered by the agent's workflow; a call
// that reaches the activity means the agent does not support it.
var errSleepInWorkflow = errors.New("sleep is run by the agent itself; this agent does not support it")

// SleepTool is sleep as a worker serves it: its schema for the model, the
// longest sleep (maxSleep; <= 0: DefaultMaxSleep) in its description. The
// agent answers its calls (Context.Sleep); run as an ordinary tool it
// says so.
func SleepTool(maxSleep time.Duration) *Tool {
	if maxSleep <= 0 {
		maxSleep = DefaultMaxSleep
	}
	t := NewTool(ToolSleep, fmt.Sprintf("Waits before going on: for a number of seconds or until a time (at most %s). "+
		"Nothing runs meanwhile; the result says when you woke. Use it to check on something later.", maxSleep),
		func(context.Context, ToolInvocation, SleepArgs) (string, error) { return "", errSleepInWorkflow })
	t.Risk = RiskLow
	return t
}

// WaitUntil checkpoints and waits until at (a durable timer) or, earlier,
// one of the named signals. With no signals only the timer ends the wait:
// signals that arrive meanwhile wait for the next segment.
func WaitUntil(at time.Time, reason string, signals ...string) Outcome {
	at = at.UTC()
	return Outcome{Kind: OutcomeWait, Reason: reason, WaitFor: signals, WakeAt: &at}
}
