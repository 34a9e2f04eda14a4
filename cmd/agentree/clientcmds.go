package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	research "github.com/agentree/agentree/agentsdk/tools/demo"
	"github.com/agentree/agentree/apiclient"
	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
)

// addClientFlags declares the flags every client command takes, with
// their environment defaults.
func addClientFlags(cmd *cobra.Command, f *clientFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", envOr("AGENTREE_ADDR", "http://127.0.0.1:8080"), "gateway address ($AGENTREE_ADDR)")
	fl.StringVar(&f.org, "org", envOr("AGENTREE_ORG", "dev"), "organization slug ($AGENTREE_ORG)")
	fl.StringVar(&f.keyFile, "key-file", "", "file holding the API key (default: the key in $AGENTREE_API_KEY)")
	// --key puts the secret in ps and shell history: kept for scripts
	// that pass it, hidden from help.
	fl.StringVar(&f.key, "key", "", "API key")
	_ = fl.MarkHidden("key")
	fl.BoolVar(&f.json, "json", false, "print JSON, for scripts")
}

// runOpts are run's own flags.
type runOpts struct {
	clientFlags
	definition, kind, system, mode string
	maxTurns, maxSteps             int
	chat, detach, demo             bool
	models, tools, policies        []string
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

A call whose tool policy is ask (--policy TOOL=ask, the worker's
configuration or the tool's own default) shows the call and asks on the
terminal: y runs it, a runs it and every later call of that tool, anything
else rejects it with the reason you type. Without a terminal, run says how to
decide with agentree approve / reject.

With --chat the execution is multi-turn: each time the agent waits, a "> "
prompt reads your next message. Ctrl-D leaves the chat (the execution
keeps waiting); Ctrl-C stops following and says how to come back.`,
		Example: `  agentree run "What do my notes say about Temporal?"
  agentree run --chat "hello"
  agentree run --demo --policy search_notes=ask
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
	fl.IntVar(&o.maxSteps, "max-steps", 0, "step budget: pause after this many steps, a step being a model call and its tool calls (0: none; agentree resume continues)")
	fl.BoolVar(&o.chat, "chat", false, "multi-turn: read each follow-up from stdin when the agent waits")
	fl.BoolVar(&o.detach, "detach", false, "start and print the ID; do not follow")
	fl.BoolVar(&o.demo, "demo", false, "run the research sample (its prompt, tools and the demo model)")
	fl.StringSliceVar(&o.models, "model", nil, "provider/modelId, repeatable (first is primary; default: see above)")
	fl.StringSliceVar(&o.tools, "tool", nil, "tool name, repeatable or comma-separated (default: see above)")
	fl.StringSliceVar(&o.policies, "policy", nil, "TOOL=auto|ask|forbid (TOOL may be a glob), repeatable: ask waits for your approval")
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
	cfg := &agentreev1.ExecutionConfig{}
	if o.mode != "" {
		cfg.Mode = &o.mode
	} else if o.chat {
		cfg.Mode = proto.String("multi-turn")
	}
	if o.maxTurns > 0 {
		cfg.MaxTurns = proto.Int32(int32(min(o.maxTurns, math.MaxInt32)))
	}
	if o.maxSteps > 0 {
		cfg.MaxSteps = proto.Int32(int32(min(o.maxSteps, math.MaxInt32)))
	}
	for _, p := range o.policies {
		name, pol, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return fmt.Errorf("run: --policy %q is not TOOL=auto|ask|forbid", p)
		}
		if cfg.ToolPolicy == nil {
			cfg.ToolPolicy = map[string]string{}
		}
		cfg.ToolPolicy[name] = pol
	}
	if proto.Size(cfg) > 0 {
		req.Config = cfg
	}
	ex := &agentreev1.AgentExecution{}
	if err := c.Do(ctx, "POST", "/agent-executions", req, ex); err != nil {
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
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// resolveDefinition turns a definition's slug (or ID) into its ID.
func resolveDefinition(ctx context.Context, c *apiclient.Client, ref string) (string, error) {
	if _, err := uuid.Parse(ref); err == nil {
		return ref, nil
	}
	for cursor := ""; ; {
		page := &agentreev1.ListAgentDefinitionsResponse{}
		path := "/agent-definitions?pageSize=500"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if err := c.Do(ctx, "GET", path, nil, page); err != nil {
			return "", fmt.Errorf("definition %q: %w", ref, err)
		}
		for _, d := range page.GetAgentDefinitions() {
			if d.GetSlug() == ref {
				return d.GetId(), nil
			}
		}
		if cursor = page.GetNextCursor(); cursor == "" {
			return "", fmt.Errorf("no agent definition with slug or ID %q in organization %s", ref, c.Org())
		}
	}
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
			if err := c.Do(cmd.Context(), "DELETE", "/agent-executions/"+url.PathEscape(args[0]), nil, ex); err != nil {
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
	_, err := fmt.Fprintln(w, clean(text))
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
