// Package customagent is an agent written against agentsdk directly, not
// the built-in react-agent: an approval agent that drafts a text with the
// model, then waits (status WAITING, no worker resources held) for a human
// to send an "approve" or "reject" signal. A rejection's note becomes the
// feedback the next draft is written from; an approval completes the
// execution. It shows Context.Signals, SignalValue and ConsumeSignal, the
// agent's own state (State.Custom) and configuration (Config.Agent), and
// data events on the live stream.
//
// Review drives the human side through the REST API. The agent imports
// agentsdk only; Review imports apiclient and the API types.
package customagent
