package main

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentree/agentree/internal/temporaltest"
)

// config is every size the benchmark runs with; the defaults are issue 7's.
type config struct {
	Scenarios string
	// Sets are the sets to run (sets.go), comma-separated.
	Sets string

	LongCalls int
	// LongNaiveCalls are the naive pattern's calls in long: enough to find
	// where each of its modes stops.
	LongNaiveCalls int
	// LongDeadline bounds a naive long conversation: one not ended by
	// then is reported STUCK and terminated.
	LongDeadline     time.Duration
	LongConversation byteSize
	LongToolOutput   byteSize

	ShortCalls        int
	ShortConversation byteSize
	ShortToolOutput   byteSize
	ShortRepeat       int
	FloorCalls        int
	ModelDelay        time.Duration

	ResumeSmallCalls, ResumeSmallKill int
	ResumeLargeCalls, ResumeLargeKill int
	ResumeConversation                byteSize
	ResumeToolOutput                  byteSize
	ResumeRepeat                      int
	ResumeHeartbeat                   time.Duration
	ResumeNaive                       bool

	// LocalModelCalls, LocalTools, NaiveLocalModelCalls and
	// NaiveLocalTools are set X's modes (sets.go).
	LocalModelCalls, LocalTools           bool
	NaiveLocalModelCalls, NaiveLocalTools bool

	ScalePoints       intList
	ScaleWindow       int
	ScaleConversation byteSize
	ScaleToolOutput   byteSize
	ScaleNaiveCalls   int

	StorageCalls        int
	StorageConversation byteSize
	StorageToolOutput   byteSize
	StorageTokens       int

	TTFTTurns int
	// JunkFloodPeriod is how long junk_flood times its valid client,
	// idle and then flooded.
	JunkFloodPeriod time.Duration
	// The streaming model of ttft and concurrent: each call takes
	// StreamModelTime, the last StreamTokens x StreamTokenDelay of it
	// streaming that many tokens.
	StreamModelTime  time.Duration
	StreamTokens     int
	StreamTokenDelay time.Duration

	ConcConversations, ConcTurns, ConcTools int
	ConcToolDelay                           time.Duration
	ConcPoolConns                           int
	// paced: PacedConversations of PacedTurns, each user message sent
	// PacedThink after the system is seen ready for it, the
	// conversations' starts spread over PacedThink.
	PacedConversations, PacedTurns int
	PacedThink                     time.Duration

	// Repeat is how many times every scenario runs; each figure is the
	// median of its repetitions.
	Repeat int
	// DefaultServer also runs every scenario on a dev server the bench
	// starts with Temporal's default dynamic config (TemporalBin).
	DefaultServer bool
	TemporalBin   string

	Trace      bool
	CPUProfile string
	Timeout    time.Duration
}

// scenarioNames are the scenarios -scenarios may name, in the order they run.
var scenarioNames = []string{"long", "short", "resume", "scale_n", "storage", "ttft", "concurrent", "paced", "junk_flood"}

// defaultScenarios are those run without -scenarios: junk_flood, a load
// test of the gateway rather than a comparison, runs when named.
var defaultScenarios = scenarioNames[:len(scenarioNames)-1]

// parseConfig reads the flags of args (without the program name).
func parseConfig(args []string) (config, error) {
	c := config{
		LongConversation: 800 << 10, LongToolOutput: 5 << 10,
		ShortConversation: 10 << 10, ShortToolOutput: 1 << 10,
		ResumeConversation: 10 << 10, ResumeToolOutput: 1 << 10,
		ScalePoints: intList{10, 100, 1000}, ScaleConversation: 1 << 10, ScaleToolOutput: 256,
		StorageConversation: 10 << 10, StorageToolOutput: 2 << 10,
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&c.Scenarios, "scenarios", strings.Join(defaultScenarios, ","), "scenarios to run, comma-separated (also: junk_flood)")
	fs.StringVar(&c.Sets, "sets", "A,B,C", "sets to run, comma-separated: A (each system's defaults), B (local model calls on both), C (everything local on both), X (the modes of -local-model-calls, -local-tools, -naive-local-model-calls, -naive-local-tools)")
	fs.IntVar(&c.Repeat, "repeat", 3, "runs of every scenario; each figure is their median, each table cell the median (lowest–highest)")
	fs.BoolVar(&c.DefaultServer, "default-server", true, "also run every scenario on a Temporal dev server with the default dynamic config, started by the bench (figures end in _default)")
	fs.StringVar(&c.TemporalBin, "temporal", temporaltest.CLI(), "the Temporal CLI that starts that server ($AGENTREE_TEMPORAL_BIN; default bin/temporal of this checkout)")
	fs.IntVar(&c.LongCalls, "long-calls", 100, "long: Agentree's model calls in the one user turn")
	fs.IntVar(&c.LongNaiveCalls, "long-naive-calls", 1000, "long: the naive pattern's model calls, enough to find where each of its modes stops")
	fs.DurationVar(&c.LongDeadline, "long-deadline", 10*time.Minute, "long: a naive conversation not ended by then is reported STUCK and terminated")
	fs.Var(&c.LongConversation, "long-conversation", "long: initial conversation size (KB = 1024 bytes)")
	fs.Var(&c.LongToolOutput, "long-tool-output", "long: size of each tool output")
	fs.IntVar(&c.ShortCalls, "short-calls", 100, "short: model calls in the one user turn")
	fs.Var(&c.ShortConversation, "short-conversation", "short: initial conversation size")
	fs.Var(&c.ShortToolOutput, "short-tool-output", "short: size of each tool output")
	fs.IntVar(&c.ShortRepeat, "short-repeat", 1, "short: conversations per system (and floors) in each repetition, interleaved; intervals are pooled")
	fs.IntVar(&c.FloorCalls, "floor-calls", 100, "short: no-op activities per floor workflow")
	fs.DurationVar(&c.ModelDelay, "model-delay", 0, "the scripted model's time per call")
	fs.IntVar(&c.ResumeSmallCalls, "resume-small-calls", 10, "resume: calls of the small conversation")
	fs.IntVar(&c.ResumeSmallKill, "resume-small-kill", 9, "resume: the worker dies during the tool call of this model call of the small conversation")
	fs.IntVar(&c.ResumeLargeCalls, "resume-large-calls", 1000, "resume: calls of the large conversation")
	fs.IntVar(&c.ResumeLargeKill, "resume-large-kill", 90, "resume: the worker dies during the tool call of this model call of the large conversation")
	fs.Var(&c.ResumeConversation, "resume-conversation", "resume: initial conversation size")
	fs.Var(&c.ResumeToolOutput, "resume-tool-output", "resume: size of each tool output")
	fs.IntVar(&c.ResumeRepeat, "resume-repeat", 1, "resume: kills per conversation size in each repetition; their median is the repetition's")
	fs.DurationVar(&c.ResumeHeartbeat, "resume-heartbeat", 2*time.Second, "resume: tool heartbeat timeout, how soon the dead worker's tool call is retried")
	fs.BoolVar(&c.ResumeNaive, "resume-naive", true, "resume: measure the naive pattern too")
	fs.BoolVar(&c.LocalModelCalls, "local-model-calls", true, "set X: Agentree's model calls' first attempts as local activities (its default); false: adapter.Options.ActivityModelCalls")
	fs.BoolVar(&c.LocalTools, "local-tools", true, "set X: Agentree's tool calls' first attempts as local activities (its default; not in resume); false: adapter.Options.ActivityToolCalls")
	fs.BoolVar(&c.NaiveLocalModelCalls, "naive-local-model-calls", false, "set X: the naive pattern's model calls as local activities (openai_agents' use_local_activity)")
	fs.BoolVar(&c.NaiveLocalTools, "naive-local-tools", false, "set X: the naive pattern's tool calls as local activities (not in resume)")
	fs.Var(&c.ScalePoints, "scale-points", "scale_n: the calls to time, ascending; the conversation is as long as the last (at most 1000, Agentree's maxTurns)")
	fs.IntVar(&c.ScaleWindow, "scale-window", 21, "scale_n: intervals around each call whose median is taken")
	fs.Var(&c.ScaleConversation, "scale-conversation", "scale_n: initial conversation size")
	fs.Var(&c.ScaleToolOutput, "scale-tool-output", "scale_n: size of each tool output")
	fs.IntVar(&c.ScaleNaiveCalls, "scale-naive-calls", 100, "scale_n: the naive pattern's conversation, capped (its history grows with the square); 0 = none")
	fs.IntVar(&c.StorageCalls, "storage-calls", 50, "storage: model calls of the conversation")
	fs.Var(&c.StorageConversation, "storage-conversation", "storage: first message size")
	fs.Var(&c.StorageToolOutput, "storage-tool-output", "storage: size of each tool output")
	fs.IntVar(&c.StorageTokens, "storage-tokens", 20, "storage: words of text in each answer (streamed as tokens)")
	fs.IntVar(&c.TTFTTurns, "ttft-turns", 30, "ttft: user messages timed")
	fs.DurationVar(&c.JunkFloodPeriod, "junk-flood-period", 15*time.Second, "junk_flood: how long the valid client is timed, idle and then flooded")
	fs.DurationVar(&c.StreamModelTime, "stream-model-time", 200*time.Millisecond, "ttft, concurrent: the streaming model's time per call, its tokens included")
	fs.IntVar(&c.StreamTokens, "stream-tokens", 20, "ttft, concurrent: tokens the streaming model streams per answer")
	fs.DurationVar(&c.StreamTokenDelay, "stream-token-delay", 2*time.Millisecond, "ttft, concurrent: time between the streaming model's tokens")
	fs.IntVar(&c.ConcConversations, "concurrent-conversations", 200, "concurrent: conversations at once, per system")
	fs.IntVar(&c.ConcTurns, "concurrent-turns", 10, "concurrent: user turns of each conversation")
	fs.IntVar(&c.ConcTools, "concurrent-tools", 2, "concurrent: tool calls each turn's first answer asks for (they run at once)")
	fs.DurationVar(&c.ConcToolDelay, "concurrent-tool-delay", 50*time.Millisecond, "concurrent: each tool call's time")
	fs.IntVar(&c.PacedConversations, "paced-conversations", 50, "paced: conversations, per system")
	fs.IntVar(&c.PacedTurns, "paced-turns", 6, "paced: user turns of each conversation")
	fs.DurationVar(&c.PacedThink, "paced-think", 3*time.Second, "paced: the time between a system's being ready for a user message and its sending")
	fs.IntVar(&c.ConcPoolConns, "concurrent-pool-conns", 0, "concurrent: the Agentree worker's Postgres pool size (0: the worker's default, entrystore.DefaultPoolConns)")
	fs.BoolVar(&c.Trace, "trace", false, "print one run's history events with relative times to stderr, per system")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of the bench process (its workers run in it) to this file")
	fs.DurationVar(&c.Timeout, "timeout", 12*time.Hour, "the whole benchmark's time limit (three sets on two servers, three repetitions each, run long)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	return c, c.validate()
}

func (c config) validate() error {
	switch {
	case c.ScalePoints[len(c.ScalePoints)-1] > 1000 || c.ScaleWindow < 1:
		return fmt.Errorf("bench: scale_n: at most 1000 calls (Agentree's maxTurns) and a window of at least 1")
	case c.LongCalls < 1, c.LongNaiveCalls < 1, c.ShortCalls < 2, c.FloorCalls < 2, c.ShortRepeat < 1, c.ResumeRepeat < 1, c.Repeat < 1, c.StorageCalls < 1, c.TTFTTurns < 1, c.JunkFloodPeriod <= 0,
		c.ConcConversations < 1, c.ConcTurns < 1, c.ConcTools < 1, c.PacedConversations < 1, c.PacedTurns < 2, c.PacedThink <= 0:
		return fmt.Errorf("bench: call counts, repeats and paced's think time must be positive (short needs 2 calls to time one, paced 2 turns)")
	case c.ResumeSmallKill < 1 || c.ResumeSmallKill >= c.ResumeSmallCalls,
		c.ResumeLargeKill < 1 || c.ResumeLargeKill >= c.ResumeLargeCalls:
		return fmt.Errorf("bench: a resume kill must be at a call with a tool call: 1 <= kill < calls")
	}
	for _, s := range splitComma(strings.ToUpper(c.Sets)) {
		if !slices.Contains(setNames, s) {
			return fmt.Errorf("bench: unknown set %q (%s)", s, strings.Join(setNames, ", "))
		}
	}
	if len(splitComma(c.Sets)) == 0 {
		return fmt.Errorf("bench: -sets names no set")
	}
	for _, s := range splitComma(c.Scenarios) {
		if !slices.Contains(scenarioNames, s) {
			return fmt.Errorf("bench: unknown scenario %q (%s)", s, strings.Join(scenarioNames, ", "))
		}
	}
	return nil
}

func (c config) runs(scenario string) bool { return slices.Contains(splitComma(c.Scenarios), scenario) }

// splitComma splits a comma-separated list, trimming spaces.
func splitComma(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// byteSize is a size flag: 512, 512B, 10KB, 1MB (KB = 1024 bytes).
type byteSize int

func (b *byteSize) String() string { return formatBytes(int64(*b)) }

func (b *byteSize) Set(s string) error {
	units := []struct {
		suffix string
		mult   int
	}{{"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}}
	mult := 1
	s = strings.ToUpper(strings.TrimSpace(s))
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("bench: %q is not a size like 800KB", s)
	}
	*b = byteSize(n * mult)
	return nil
}

// formatBytes prints a size the way the flags take it.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d B", n)
	}
}
