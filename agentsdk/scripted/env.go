package scripted

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentree/agentree/agentsdk"
)

// The environment a scripted provider made by New reads, so a worker
// process (agentree worker) can be slowed and observed from outside: the
// fault-injection suite (tools/chaos) needs model calls in flight when it
// kills a process, and a record of every call to tell a retried call from
// a completed one run again.
const (
	// EnvDelay is the least time waited before each answer (a duration,
	// such as 800ms): a model's time to first token.
	EnvDelay = "AGENTREE_SCRIPTED_DELAY"
	// EnvTokenDelay is the least time waited between streamed tokens.
	EnvTokenDelay = "AGENTREE_SCRIPTED_TOKEN_DELAY"
	// EnvCallLog names a file every call's start and end are appended to,
	// one CallRecord JSON line each.
	EnvCallLog = "AGENTREE_SCRIPTED_CALL_LOG"
	// EnvHang names a file that arms one hang: the next call that streams
	// text, in any process given the same name, removes the file (so one
	// call takes it), sends its first token and then nothing more, holding
	// the stream open until its context ends — a model server that stops
	// mid-stream without closing the connection.
	EnvHang = "AGENTREE_SCRIPTED_HANG"
)

// Latency is the least delay every answer of a provider gets, whatever its
// script says.
type Latency struct {
	Delay, TokenDelay time.Duration
}

// CallRecord is one line of the call log: a call started or ended.
type CallRecord struct {
	At    time.Time `json:"at"`
	PID   int       `json:"pid"`
	Phase string    `json:"phase"` // "start", "end", or "hang" (EnvHang)
	// Turn is the number of assistant messages in the request, and User
	// the text of its last user message: with the conversation, they name
	// the model call.
	Turn int    `json:"turn"`
	User string `json:"user"`
}

// WithLatency sets the least delay of every answer. It returns p.
func (p *Provider) WithLatency(l Latency) *Provider {
	p.latency = l
	return p
}

// WithCallLog appends a CallRecord line to path at every call's start and
// end. It returns p.
func (p *Provider) WithCallLog(path string) *Provider {
	p.callLog = path
	return p
}

// fromEnv applies EnvDelay, EnvTokenDelay and EnvCallLog. A value that is
// not a duration is reported on stderr and ignored: New has no error to
// return, and a test provider must not stop a worker from starting.
func (p *Provider) fromEnv() {
	for name, d := range map[string]*time.Duration{EnvDelay: &p.latency.Delay, EnvTokenDelay: &p.latency.TokenDelay} {
		v := strings.TrimSpace(os.Getenv(name))
		if v == "" {
			continue
		}
		parsed, err := time.ParseDuration(v)
		if err != nil || parsed < 0 {
			fmt.Fprintf(os.Stderr, "scripted: %s=%q is not a duration (such as 800ms); ignored\n", name, v)
			continue
		}
		*d = parsed
	}
	p.callLog = os.Getenv(EnvCallLog)
	p.hangFile = os.Getenv(EnvHang)
}

// takeHang reports whether this call is the one to hang: EnvHang's file
// exists and this call removed it (a remove succeeds once, whichever
// process tries).
func (p *Provider) takeHang() bool {
	return p.hangFile != "" && os.Remove(p.hangFile) == nil
}

// logCall appends one record to the call log, when there is one. One
// O_APPEND write per line keeps lines whole across worker processes.
func (p *Provider) logCall(phase string, turn int, req agentsdk.ModelRequest) {
	if p.callLog == "" {
		return
	}
	rec := CallRecord{At: time.Now(), PID: os.Getpid(), Phase: phase, Turn: turn}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == agentsdk.RoleUser {
			rec.User = req.Messages[i].Text()
			break
		}
	}
	line, _ := json.Marshal(rec)
	f, err := os.OpenFile(p.callLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "scripted: call log: %v\n", err)
		return
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		fmt.Fprintf(os.Stderr, "scripted: call log: %v\n", err)
	}
}
