// Package react is the built-in react-agent: a ReAct loop of model calls
// and tool calls over the conversation tree, one model turn per segment.
//
// Each segment takes the pending user messages (so messages sent mid-turn
// steer the next model call), calls the model, runs the tool calls it asked
// for, and checkpoints. A final answer completes a one-shot execution or
// waits for the next userMessage in multi-turn mode. It stops on maxTurns
// and on a repeated identical tool call, recording why. It imports agentsdk
// only.
package react
