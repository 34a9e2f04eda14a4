package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

// TestMain lets the resume scenario re-run this test binary as a worker
// process, as it re-runs the bench binary.
func TestMain(m *testing.M) {
	if spec := os.Getenv(workerEnv); spec != "" {
		if err := runWorkerProcess(spec); err != nil {
			fmt.Fprintln(os.Stderr, "bench worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestEveryScenarioTiny runs every scenario of every set at a tiny size:
// each figure is printed, per set and on both servers; the report names
// each system's mode per set; Agentree completes; the ratios agree with
// the figures they divide. Timings are reported, never asserted.
func TestEveryScenarioTiny(t *testing.T) {
	cfg, err := parseConfig([]string{
		"-sets=A,B,C",
		"-long-calls=5", "-long-naive-calls=5", "-long-conversation=4KB", "-long-tool-output=512B", "-long-deadline=2m",
		"-short-calls=4", "-short-conversation=1KB", "-short-tool-output=256B", "-short-repeat=1", "-floor-calls=3",
		"-resume-small-calls=3", "-resume-small-kill=2", "-resume-large-calls=6", "-resume-large-kill=4",
		"-resume-repeat=1", "-resume-heartbeat=500ms",
		"-scale-points=3,6", "-scale-window=2", "-scale-naive-calls=6",
		"-storage-calls=3", "-storage-conversation=1KB", "-storage-tool-output=512B", "-storage-tokens=3",
		"-ttft-turns=2", "-stream-model-time=20ms", "-stream-tokens=3", "-stream-token-delay=1ms",
		"-concurrent-conversations=3", "-concurrent-turns=2", "-concurrent-tool-delay=5ms",
		"-paced-conversations=2", "-paced-turns=2", "-paced-think=1s", "-timeout=20m", "-repeat=1", "-default-server=true",
	})
	require.NoError(t, err)
	var out, log bytes.Buffer
	require.NoError(t, run(t.Context(), cfg, &out, &log), "log:\n%s", log.String())
	report := out.String()
	t.Log(report)

	// The report's first lines name each system's mode in each set.
	head := strings.Join(strings.SplitN(report, "\n", 5)[:4], "\n")
	for _, set := range knownSets {
		require.Contains(t, head, set.describe())
	}
	require.Contains(t, head, "set A (each system's defaults): Agentree: model calls' first attempts as local activities")
	require.Contains(t, head, "naive: model calls as activities; tool calls as activities.")

	figures := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(report))
	for sc.Scan() {
		if name, value, ok := strings.Cut(sc.Text(), "="); ok && !strings.Contains(name, " ") {
			figures[name] = value
		}
	}
	num := func(name string) float64 {
		t.Helper()
		require.Contains(t, figures, name)
		v, err := strconv.ParseFloat(figures[name], 64)
		require.NoError(t, err, name)
		return v
	}
	for _, set := range knownSets {
		p := set.prefix()
		for _, name := range []string{
			"long_agentree_calls", "long_agentree_max_run_history_bytes", "long_agentree_total_history_bytes",
			"long_naive_calls", "long_naive_status", "long_naive_total_history_bytes", "long_history_per_call_ratio",
			"short_agentree_call_p50_ms", "short_naive_call_p50_ms", "short_ratio_p50", "floor_activity_ms", "floor_local_activity_ms",
			"short_overhead_floor_ratio", "short_naive_overhead_floor_ratio", "short_agentree_floor_ms", "short_naive_floor_ms",
			"resume_small_ms", "resume_large_ms", "resume_ratio",
			"resume_naive_small_ms", "resume_naive_large_ms", "resume_naive_ratio",
			"short_local_ratio_p50", "short_tracing_ratio_p50", "actions_per_turn_agentree", "actions_per_turn_naive",
			"scale_n_call3_ms", "scale_n_call6_ms", "scale_n_ratio", "scale_n_naive_call3_ms", "scale_n_naive_call6_ms",
			"storage_ratio", "storage_durable_ratio", "storage_disk_ratio", "storage_bytes_agent_entry",
			"ttft_added_p50_ms", "ttft_added_p99_ms",
			"concurrent_agentree_throughput", "concurrent_agentree_p50_overhead_ms", "concurrent_agentree_p99_overhead_ms",
			"concurrent_agentree_cpu_s_per_call", "concurrent_agentree_rss_mb", "concurrent_naive_throughput",
			"concurrent_naive_p50_overhead_ms", "concurrent_naive_p99_overhead_ms", "concurrent_naive_cpu_s_per_call",
			"concurrent_naive_rss_mb", "concurrent_pg_connections_max", "concurrent_throughput_ratio",
			"concurrent_agentree_actions_per_call", "concurrent_naive_actions_per_call",
			"turn_start_p50_ratio", "rss_ratio", "actions_per_call_ratio",
			"paced_agentree_turn_start_p50_ms", "paced_naive_turn_start_p50_ms", "paced_agentree_turn_start_p99_ms",
			"paced_agentree_ready_gap_p99_ms", "paced_turn_start_p50_ratio",
		} {
			// Every figure is taken on the make-up server and on the dev
			// server of default dynamic config the bench starts.
			for _, name := range []string{p + name, p + name + defaultSuffix} {
				require.Contains(t, figures, name)
				require.NotEmpty(t, figures[name], name)
			}
		}
		for _, sfx := range []string{"", defaultSuffix} {
			require.Equal(t, "COMPLETED", figures[p+"long_agentree_status"+sfx], p)
			require.Equal(t, "5", figures[p+"long_agentree_calls"+sfx], p)
			require.Equal(t, "COMPLETED", figures[p+"long_naive_status"+sfx], p+": the tiny naive conversation fits in history")
			require.Equal(t, "5", figures[p+"long_naive_calls"+sfx], p+": model calls counted from activities or markers")
		}
		// The messages are in the store's rows: there is at least a byte
		// of rows per byte of conversation.
		require.GreaterOrEqual(t, num(p+"storage_ratio"), 1.0, p)
		require.Equal(t, "6", figures[p+"storage_messages"], p+": the first message, 3 answers, 2 tool results")
		// Each system's worker process ran and used memory; Agentree's held
		// a Postgres connection; each answered a second turn's message
		// after it was sent; every ratio of the set is positive.
		for _, name := range []string{"concurrent_agentree_rss_mb", "concurrent_naive_rss_mb", "concurrent_pg_connections_max",
			"concurrent_agentree_turn_start_p50_ms", "concurrent_naive_turn_start_p50_ms", "concurrent_throughput_ratio",
			"turn_start_p50_ratio", "rss_ratio", "actions_per_call_ratio", "short_overhead_floor_ratio", "short_naive_overhead_floor_ratio",
			"floor_activity_ms", "floor_local_activity_ms", "actions_per_turn_agentree",
			"paced_agentree_turn_start_p50_ms", "paced_naive_turn_start_p50_ms", "paced_turn_start_p50_ratio"} {
			require.Positive(t, num(p+name), p+name)
		}
		// paced's ready gap leaves its think time out: a system ready at
		// once shows well under its second.
		require.Less(t, num(p+"paced_naive_ready_gap_p99_ms"), 1000.0, p)
		// A ratio is its two figures' quotient, within their rounding.
		require.InEpsilon(t, num(p+"concurrent_agentree_actions_per_call")/num(p+"concurrent_naive_actions_per_call"),
			num(p+"actions_per_call_ratio"), 0.05, p)
		require.InEpsilon(t, num(p+"concurrent_agentree_rss_mb")/num(p+"concurrent_naive_rss_mb"), num(p+"rss_ratio"), 0.05, p)
		// Each overhead is judged against the floor of its kind of step.
		floor := map[bool]float64{false: num(p + "floor_activity_ms"), true: num(p + "floor_local_activity_ms")}
		require.InDelta(t, floor[set.Mode.agentreeFloorLocal()], num(p+"short_agentree_floor_ms"), 0.05, p)
		require.InDelta(t, floor[set.Mode.naiveFloorLocal()], num(p+"short_naive_floor_ms"), 0.05, p)
		// A naive turn is at least its model activity; with its calls
		// local, its one-shot run's turns share workflow tasks.
		if !set.Mode.NaiveLocalModelCalls {
			require.GreaterOrEqual(t, num(p+"actions_per_turn_naive"), 1.0, p)
		}
		require.Positive(t, num(p+"actions_per_turn_naive"), p)
	}
	// With its model calls local, the naive pattern's history no longer
	// holds the conversation each call was given.
	require.Less(t, num("setB_short_naive_total_history_bytes"), num("setA_short_naive_total_history_bytes"))
	require.Less(t, num("setC_short_naive_total_history_bytes"), num("setA_short_naive_total_history_bytes"))
	// The figures issue 33 names without a set are set A's.
	for _, name := range headline {
		for _, sfx := range []string{"", defaultSuffix} {
			require.Equal(t, figures["setA_"+name+sfx], figures[name+sfx], name+sfx)
		}
	}
	// Every set's targets are judged: by name, met or MISSED.
	for _, set := range knownSets {
		require.Contains(t, report, "targets, set "+set.Name+" (medians)")
	}
	require.Contains(t, report, "setA_concurrent_throughput_ratio >= 1.5")
	require.Contains(t, report, "setC_turn_start_p50_ratio <= 1")
	require.Contains(t, report, "setC_paced_turn_start_p50_ratio <= 1")
}

// TestEveryScenarioIsNamed: -scenarios accepts each scenario the bench runs.
func TestEveryScenarioIsNamed(t *testing.T) {
	var names []string
	for _, s := range (&bench{}).scenarios() {
		names = append(names, s.name)
	}
	require.Equal(t, scenarioNames, names)
}

func TestOverheadAtIsTheMedianAroundACall(t *testing.T) {
	var iv []time.Duration
	for i := range 20 {
		iv = append(iv, time.Duration(i)*time.Millisecond)
	}
	require.Equal(t, 9*time.Millisecond, overheadAt(iv, 10, 5))  // intervals 7..11
	require.Equal(t, 17*time.Millisecond, overheadAt(iv, 20, 5)) // shifted: 15..19
	require.Equal(t, 2*time.Millisecond, overheadAt(iv, 1, 5))   // shifted: 0..4
}

func TestPlanRidesInThePrompt(t *testing.T) {
	for _, p := range []plan{
		{ID: "long-ab12-3", Calls: 100, ToolBytes: 5 << 10},
		{ID: "c-1", Calls: 2, ToolBytes: 64, Turns: 10, Tools: 2, ModelMs: 200, Tokens: 20, TokenMs: 2, ToolMs: 50, Random: true},
	} {
		prompt := p.prompt(800 << 10)
		require.Len(t, prompt, 800<<10)
		got, err := readPlan([]agentsdk.Message{agentsdk.TextMessage(agentsdk.RoleUser, prompt)})
		require.NoError(t, err)
		require.Equal(t, p, got)
	}
	_, err := readPlan([]agentsdk.Message{agentsdk.TextMessage(agentsdk.RoleUser, planPrefix+" id=x calls=2 colour=red\n")})
	require.Error(t, err)
}

// TestMultiTurnPlan: each user turn asks for its tools, then answers; the
// model's time is split into a wait and its tokens.
func TestMultiTurnPlan(t *testing.T) {
	p := plan{ID: "c", Calls: 2, Turns: 3, Tools: 2, ModelMs: 200, Tokens: 20, TokenMs: 2, ToolMs: 50}
	for step := range 6 {
		turn := p.turn(step, 0)
		require.Len(t, strings.Fields(turn.Text), 20, step)
		require.Equal(t, 160*time.Millisecond, turn.Delay)
		if step%2 == 0 {
			require.Len(t, turn.ToolCalls, 2, step)
			require.NotEqual(t, turn.ToolCalls[0].ID, turn.ToolCalls[1].ID)
		} else {
			require.Empty(t, turn.ToolCalls, step)
		}
	}
	require.Equal(t, 200*time.Millisecond, p.modelTime(0))
	require.Equal(t, 162*time.Millisecond, p.firstToken(0))
	one := plan{ID: "s", Calls: 3}
	require.Len(t, one.turn(1, 0).ToolCalls, 1)
	require.Empty(t, one.turn(2, 0).ToolCalls)
	require.Equal(t, "Done after 3 model calls.", one.turn(2, 0).Text)
}

func TestRandomWords(t *testing.T) {
	a := randomWords(1000, 7)
	require.Len(t, a, 1000)
	require.Equal(t, a, randomWords(1000, 7))
	require.NotEqual(t, a, randomWords(1000, 8))
	require.Len(t, strings.Fields(randomWordsN(20, 3)), 20)
}

func TestSizes(t *testing.T) {
	for in, want := range map[string]int{"800KB": 800 << 10, "5kb": 5 << 10, "1MB": 1 << 20, "512B": 512, "77": 77} {
		var b byteSize
		require.NoError(t, b.Set(in), in)
		require.Equal(t, want, int(b), in)
	}
	var b byteSize
	require.Error(t, b.Set("lots"))
}
