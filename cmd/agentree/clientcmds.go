package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/known/structpb"

	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
	"github.com/agentree/agentree/samples/research"
)

// addClientFlags declares the flags every client command takes, with
// their environment defaults.
func addClientFlags(cmd *cobra.Command, f *clientFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", envOr("AGENTREE_ADDR", "http://127.0.0.1:8080"), "gateway address ($AGENTREE_ADDR)")
	fl.StringVar(&f.org, "org", envOr("AGENTREE_ORG", "dev"), "organization slug ($AGENTREE_ORG)")
	fl.StringVar(&f.key, "key", "", "API key (default $AGENTREE_API_KEY)")
	fl.BoolVar(&f.json, "json", false, "print JSON, for scripts")
}

// runOpts are run's own flags.
type runOpts struct {
	clientFlags
	definition, kind, system, mode string
	maxTurns                       int
	chat, detach, demo             bool
	models, tools                  []string
}

func runCmd() *cobra.Command {
	var o runOpts
	cmd := &cobra.Command{
		Use:   "run [flags] PROMPT",
		Short: "Start an execution and show it live",
		Long: `Start an execution and show it live: tokens as they arrive, each tool call
and its result, until the agent completes or waits for input.

Without --model, run asks the gateway which models its workers offer and
uses the scripted demo model scripted/scripted-1 when offered, else the
first one; without --tool it gives the agent every tool offered on that
model's task queue. A gateway that cannot say (no capabilities endpoint)
gets scripted/scripted-1 with search_notes, fetch_note and word_count,
which is what ` + "`make run`" + `'s dev worker serves.

With --chat the execution is multi-turn: each time the agent waits, a "> "
prompt reads your next message. Ctrl-D leaves the chat (the execution
keeps waiting); Ctrl-C stops following and says how to come back.`,
		Example: `  agentree run "What do my notes say about Temporal?"
  agentree run --chat "hello"
  agentree run --definition researcher "Summarise the notes"
  agentree run --model anthropic/claude-sonnet-4-5 --tool search_notes,word_count "..."`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.models, o.tools = splitList(o.models), splitList(o.tools)
			return runRun(cmd, o, strings.TrimSpace(strings.Join(args, " ")))
		},
	}
	addClientFlags(cmd, &o.clientFlags)
	fl := cmd.Flags()
	fl.StringVar(&o.definition, "definition", "", "start from this agent definition (slug or ID)")
	fl.StringVar(&o.kind, "kind", "react-agent", "agent kind (inline)")
	fl.StringVar(&o.system, "system", "", "system prompt (inline)")
	fl.StringVar(&o.mode, "mode", "", "one-shot or multi-turn")
	fl.IntVar(&o.maxTurns, "max-turns", 0, "most model calls (0: default)")
	fl.BoolVar(&o.chat, "chat", false, "multi-turn: read each follow-up from stdin when the agent waits")
	fl.BoolVar(&o.detach, "detach", false, "start and print the ID; do not follow")
	fl.BoolVar(&o.demo, "demo", false, "run the research sample (its prompt, tools and the demo model)")
	fl.StringSliceVar(&o.models, "model", nil, "provider/modelId, repeatable (first is primary; default: see above)")
	fl.StringSliceVar(&o.tools, "tool", nil, "tool name, repeatable or comma-separated (default: see above)")
	_ = cmd.RegisterFlagCompletionFunc("mode", cobra.FixedCompletions([]string{"one-shot", "multi-turn"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// runRun starts an execution and shows it live.
func runRun(cmd *cobra.Command, o runOpts, prompt string) error {
	ctx, out, errOut := cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	if o.demo {
		cfg := research.Config(demoModel())
		if prompt == "" {
			prompt = research.Prompt
		}
		o.system = cfg.SystemPrompt
		o.models = nil
		for _, m := range cfg.Models {
			o.models = append(o.models, m.Key())
		}
		o.tools = cfg.Tools
		fmt.Fprintf(errOut, "demo: the research sample on %s\n", cfg.Models[0].Key())
	}
	if prompt == "" {
		return errors.New("run: give the prompt as an argument (agentree run \"...\")")
	}
	c, err := o.client()
	if err != nil {
		return err
	}
	req := &agentreev1.CreateAgentExecutionRequest{UserPrompt: prompt, SystemPrompt: o.system, Tools: o.tools}
	if o.definition != "" {
		if req.AgentDefinitionId, err = resolveDefinition(ctx, c, o.definition); err != nil {
			return fmt.Errorf("run: %w", err)
		}
		if cmd.Flags().Changed("kind") {
			req.Kind = o.kind
		}
	} else {
		req.Kind = o.kind
		if len(o.models) == 0 || len(o.tools) == 0 {
			model, tools, note, err := defaultModelAndTools(ctx, c, firstOr(o.models, ""))
			if err != nil {
				return fmt.Errorf("run: %w", err)
			}
			if note != "" {
				fmt.Fprintln(errOut, note)
			}
			if len(o.models) == 0 {
				o.models = []string{model}
			}
			if len(o.tools) == 0 {
				req.Tools = tools
			}
		}
	}
	for _, m := range o.models {
		p, id, ok := strings.Cut(m, "/")
		if !ok || p == "" || id == "" {
			return fmt.Errorf("run: --model %q is not provider/modelId", m)
		}
		req.Models = append(req.Models, &agentreev1.ModelRef{Provider: p, ModelId: id})
	}
	cfg := map[string]any{}
	if o.mode != "" {
		cfg["mode"] = o.mode
	} else if o.chat {
		cfg["mode"] = "multi-turn"
	}
	if o.maxTurns > 0 {
		cfg["maxTurns"] = o.maxTurns
	}
	if len(cfg) > 0 {
		if req.Config, err = structpb.NewStruct(cfg); err != nil {
			return fmt.Errorf("run: config: %w", err)
		}
	}
	ex := &agentreev1.AgentExecution{}
	if err := c.do(ctx, "POST", "/agent-executions", req, ex); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if o.detach {
		return printResult(out, o.clientFlags, ex, ex.GetId())
	}
	st := newStyle(out)
	if !o.json {
		fmt.Fprintln(out, st.dim("execution "+ex.GetId()))
	}
	return follow(ctx, c, o.clientFlags, out, st, ex.GetId(), o.chat)
}

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}

// splitList flattens comma-separated values and drops empty ones.
func splitList(in []string) []string {
	var out []string
	for _, v := range in {
		out = append(out, list(v)...)
	}
	return out
}

// resolveDefinition turns a definition's slug (or ID) into its ID.
func resolveDefinition(ctx context.Context, c *apiClient, ref string) (string, error) {
	if _, err := uuid.Parse(ref); err == nil {
		return ref, nil
	}
	for cursor := ""; ; {
		page := &agentreev1.ListAgentDefinitionsResponse{}
		path := "/agent-definitions?pageSize=500"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if err := c.do(ctx, "GET", path, nil, page); err != nil {
			return "", fmt.Errorf("definition %q: %w", ref, err)
		}
		for _, d := range page.GetAgentDefinitions() {
			if d.GetSlug() == ref {
				return d.GetId(), nil
			}
		}
		if cursor = page.GetNextCursor(); cursor == "" {
			return "", fmt.Errorf("no agent definition with slug or ID %q in organization %s", ref, c.org)
		}
	}
}

func sendMessage(ctx context.Context, c *apiClient, id, text string) error {
	v, err := structpb.NewValue(map[string]any{"text": text})
	if err != nil {
		return err
	}
	return c.do(ctx, "POST", "/agent-executions/"+url.PathEscape(id)+"/signal",
		&agentreev1.SignalAgentExecutionRequest{SignalName: "userMessage", SignalValue: v}, nil)
}

func sendCmd() *cobra.Command {
	var f clientFlags
	var wait bool
	cmd := &cobra.Command{
		Use:   "send [flags] EXECUTION_ID MESSAGE",
		Short: "Send a follow-up message to a multi-turn execution",
		Long: `Send a follow-up message to a multi-turn execution. It is kept in the
execution's inbox and answered when the agent next takes input, so it may be
sent while the agent is still working. With --wait, send waits for the
answer and prints it.`,
		Example:           `  agentree send 0b6f…-… "and what about signals?" --wait`,
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: completeExecutionIDs(&f, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			id := args[0]
			text := strings.Join(args[1:], " ")
			if err := sendMessage(cmd.Context(), c, id, text); err != nil {
				return fmt.Errorf("send: %w", err)
			}
			if wait {
				return waitForAnswer(cmd, c, f, id, text)
			}
			if f.json {
				fmt.Fprintf(cmd.OutOrStdout(), "{\"sent\":true,\"executionId\":%q}\n", id)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "sent; see the answer with: agentree show %s\n", id)
			return nil
		},
	}
	addClientFlags(cmd, &f)
	cmd.Flags().BoolVar(&wait, "wait", false, "wait for the answer and print it")
	return cmd
}

// waitForAnswer polls until the conversation holds the user's message
// followed by an assistant answer and the execution waits or has ended,
// then prints that answer.
func waitForAnswer(cmd *cobra.Command, c *apiClient, f clientFlags, id, text string) error {
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		ex := &agentreev1.AgentExecution{}
		if err := c.do(ctx, "GET", "/agent-executions/"+url.PathEscape(id), nil, ex); err != nil {
			return fmt.Errorf("send: %w", err)
		}
		settled := ex.GetStatus() != "PENDING" && ex.GetStatus() != "RUNNING"
		if settled {
			msgs, err := allMessages(ctx, c, id)
			if err != nil {
				return fmt.Errorf("send: %w", err)
			}
			if answer := answerTo(msgs, text); answer != nil || ex.GetStatus() != "WAITING" {
				if f.json {
					_, err := fmt.Fprintf(out, "{\"execution\":%s,\"answer\":%s}\n", compactJSON(ex), compactJSON(answer))
					return err
				}
				st := newStyle(out)
				if answer != nil {
					printMessage(out, st, answer)
				}
				fmt.Fprintln(out, statusText(st, ex))
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return interrupted(id)
		case <-tick.C:
		}
	}
}

// answerTo returns the last assistant message after the last user message
// whose text is text, or nil while there is none.
func answerTo(msgs []*agentreev1.Message, text string) *agentreev1.Message {
	asked := -1
	for i, m := range msgs {
		if m.GetRole() == "user" && messageText(m) == text {
			asked = i
		}
	}
	if asked < 0 {
		return nil
	}
	last := msgs[len(msgs)-1]
	if len(msgs)-1 > asked && last.GetRole() == "assistant" {
		return last
	}
	return nil
}

func messageText(m *agentreev1.Message) string {
	var b strings.Builder
	for _, c := range m.GetContent() {
		if c.GetType() == "text" {
			b.WriteString(c.GetText())
		}
	}
	return b.String()
}

func listCmd() *cobra.Command {
	var f clientFlags
	var status, kind string
	var limit int
	cmd := &cobra.Command{
		Use:   "ls [flags]",
		Short: "List executions, newest first",
		Long: `List executions, newest first.

STEPS counts model turns plus tool calls: each answer the model gave (with
or without tool calls) is one step and each tool call another, so a chat of
three answered turns shows 3 and a turn that called two tools shows 3. It
is read from each execution's conversation.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runList(cmd, f, status, kind, limit)
		},
	}
	addClientFlags(cmd, &f)
	cmd.Flags().StringVar(&status, "status", "", "only this status (running, waiting, completed, failed, cancelled, ...)")
	cmd.Flags().StringVar(&kind, "kind", "", "only this kind")
	cmd.Flags().IntVar(&limit, "limit", 20, "how many")
	_ = cmd.RegisterFlagCompletionFunc("status", cobra.FixedCompletions(
		[]string{"pending", "running", "waiting", "cancelling", "completed", "failed", "cancelled"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func listExecutions(ctx context.Context, c *apiClient, status, kind string, limit int) ([]*agentreev1.AgentExecution, error) {
	q := url.Values{}
	q.Set("pageSize", fmt.Sprint(limit))
	if status != "" {
		q.Set("status", strings.ToUpper(status))
	}
	if kind != "" {
		q.Set("kind", kind)
	}
	page := &agentreev1.ListAgentExecutionsResponse{}
	if err := c.do(ctx, "GET", "/agent-executions?"+q.Encode(), nil, page); err != nil {
		return nil, err
	}
	return page.GetAgentExecutions(), nil
}

// runList lists executions, newest first.
func runList(cmd *cobra.Command, f clientFlags, status, kind string, limit int) error {
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	c, err := f.client()
	if err != nil {
		return err
	}
	exs, err := listExecutions(ctx, c, status, kind, limit)
	if err != nil {
		return fmt.Errorf("ls: %w", err)
	}
	if f.json {
		all := make([]json.RawMessage, len(exs))
		for i, e := range exs {
			all[i] = compactJSON(e)
		}
		return json.NewEncoder(out).Encode(all)
	}
	steps := countSteps(ctx, c, exs)
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATUS\tSTEPS\tCREATED")
	for i, e := range exs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", e.GetId(), e.GetKind(), e.GetStatus(), steps[i],
			e.GetCreatedAt().AsTime().Local().Format("2006-01-02 15:04:05"))
	}
	return tw.Flush()
}

// countSteps counts each execution's model turns and tool calls from its
// conversation, four executions at a time; where that fails it falls back
// to the execution's own stepCount (tool calls only).
func countSteps(ctx context.Context, c *apiClient, exs []*agentreev1.AgentExecution) []int {
	steps := make([]int, len(exs))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, e := range exs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			msgs, err := allMessages(ctx, c, e.GetId())
			if err != nil {
				steps[i] = int(e.GetStepCount())
				return
			}
			for _, m := range msgs {
				if m.GetRole() == "assistant" || m.GetRole() == "tool_result" {
					steps[i]++
				}
			}
		}()
	}
	wg.Wait()
	return steps
}

// allMessages reads the active path's messages, every page.
func allMessages(ctx context.Context, c *apiClient, id string) ([]*agentreev1.Message, error) {
	var msgs []*agentreev1.Message
	for cursor := ""; ; {
		page := &agentreev1.ListMessagesResponse{}
		path := "/agent-executions/" + url.PathEscape(id) + "/messages?pageSize=500"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if err := c.do(ctx, "GET", path, nil, page); err != nil {
			return nil, err
		}
		msgs = append(msgs, page.GetMessages()...)
		if cursor = page.GetNextCursor(); cursor == "" {
			return msgs, nil
		}
	}
}

func showCmd() *cobra.Command {
	var f clientFlags
	var wait bool
	cmd := &cobra.Command{
		Use:               "show [flags] EXECUTION_ID",
		Short:             "Show an execution and its conversation",
		Long:              "Show an execution and its conversation; with --wait, once it waits for input or has ended.",
		Example:           "  agentree show 0b6f…-…\n  agentree show 0b6f…-… --json | jq .execution.status",
		Args:              exactlyOneID("show"),
		ValidArgsFunction: completeExecutionIDs(&f, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if wait {
				if err := waitSettled(cmd.Context(), f, args[0]); err != nil {
					return fmt.Errorf("show: %w", err)
				}
			}
			return runShow(cmd, f, args[0])
		},
	}
	addClientFlags(cmd, &f)
	cmd.Flags().BoolVar(&wait, "wait", false, "first wait until it waits for input or has ended")
	return cmd
}

// waitSettled polls until the execution is neither starting nor running.
func waitSettled(ctx context.Context, f clientFlags, id string) error {
	c, err := f.client()
	if err != nil {
		return err
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		ex := &agentreev1.AgentExecution{}
		if err := c.do(ctx, "GET", "/agent-executions/"+url.PathEscape(id), nil, ex); err != nil {
			return err
		}
		switch ex.GetStatus() {
		case "PENDING", "RUNNING", "CANCELLING":
		default:
			return nil
		}
		select {
		case <-ctx.Done():
			return interrupted(id)
		case <-tick.C:
		}
	}
}

// exactlyOneID says what is missing in the command's terms.
func exactlyOneID(name string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("%s: give one execution ID (agentree ls lists them), got %d arguments", name, len(args))
		}
		return nil
	}
}

// runShow prints an execution and its conversation.
func runShow(cmd *cobra.Command, f clientFlags, id string) error {
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	c, err := f.client()
	if err != nil {
		return err
	}
	ex := &agentreev1.AgentExecution{}
	if err := c.do(ctx, "GET", "/agent-executions/"+url.PathEscape(id), nil, ex); err != nil {
		return fmt.Errorf("show: %w", err)
	}
	msgs, err := allMessages(ctx, c, id)
	if err != nil {
		return fmt.Errorf("show: %w", err)
	}
	if f.json {
		all := make([]json.RawMessage, len(msgs))
		for i, m := range msgs {
			all[i] = compactJSON(m)
		}
		return json.NewEncoder(out).Encode(map[string]any{"execution": compactJSON(ex), "messages": all})
	}
	st := newStyle(out)
	fmt.Fprintf(out, "%s %s %s\n\n", st.bold(ex.GetId()), ex.GetKind(), statusText(st, ex))
	for _, m := range msgs {
		printMessage(out, st, m)
	}
	return nil
}

func statusText(st style, ex *agentreev1.AgentExecution) string {
	s := ex.GetStatus()
	if ex.GetStopReason() != "" {
		s += " (" + ex.GetStopReason() + ")"
	}
	if ex.GetError() != "" {
		s += ": " + ex.GetError()
	}
	switch ex.GetStatus() {
	case "COMPLETED":
		return st.green(s)
	case "FAILED", "CANCELLED":
		return st.red(s)
	}
	return s
}

func printMessage(w io.Writer, st style, m *agentreev1.Message) {
	label := map[string]string{"user": "you", "assistant": "agent", "system": "system", "tool_result": "tool " + m.GetToolName()}[m.GetRole()]
	fmt.Fprintln(w, st.bold(label+":"))
	for _, b := range m.GetContent() {
		switch b.GetType() {
		case "text":
			text := b.GetText()
			if m.GetRole() == "tool_result" && len(text) > 400 {
				text = text[:400] + "…"
			}
			fmt.Fprintln(w, text)
		case "thinking":
			fmt.Fprintln(w, st.dim(b.GetThinking()))
		case "tool_call":
			if tc := b.GetToolCall(); tc != nil {
				args, _ := json.Marshal(tc.GetArguments().AsInterface())
				fmt.Fprintf(w, "%s %s %s\n", st.cyan("→"), tc.GetName(), st.dim(string(args)))
			}
		}
	}
	fmt.Fprintln(w)
}

func cancelCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:               "cancel [flags] EXECUTION_ID",
		Short:             "Cancel an execution",
		Args:              exactlyOneID("cancel"),
		ValidArgsFunction: completeExecutionIDs(&f, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			ex := &agentreev1.AgentExecution{}
			if err := c.do(cmd.Context(), "DELETE", "/agent-executions/"+url.PathEscape(args[0]), nil, ex); err != nil {
				return fmt.Errorf("cancel: %w", err)
			}
			return printResult(cmd.OutOrStdout(), f, ex, ex.GetId()+" "+ex.GetStatus())
		},
	}
	addClientFlags(cmd, &f)
	return cmd
}

func printResult(w io.Writer, f clientFlags, ex *agentreev1.AgentExecution, text string) error {
	if f.json {
		_, err := fmt.Fprintf(w, "%s\n", compactJSON(ex))
		return err
	}
	_, err := fmt.Fprintln(w, text)
	return err
}

// completeExecutionIDs completes the first of n positional arguments with
// the newest execution IDs, when the gateway is reachable.
func completeExecutionIDs(f *clientFlags, n int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) >= n {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := f.client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		exs, err := listExecutions(cmd.Context(), c, "", "", 50)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, e := range exs {
			out = append(out, cobra.CompletionWithDesc(e.GetId(), e.GetStatus()))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
