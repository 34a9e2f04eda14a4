package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	research "github.com/agentree/agentree/agentsdk/tools/demo"
)

func clientFlagSet(name string, f *clientFlags) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&f.addr, "addr", envOr("AGENTREE_ADDR", "http://127.0.0.1:8080"), "gateway address ($AGENTREE_ADDR)")
	fs.StringVar(&f.org, "org", envOr("AGENTREE_ORG", "dev"), "organization slug ($AGENTREE_ORG)")
	fs.StringVar(&f.key, "key", os.Getenv("AGENTREE_API_KEY"), "API key ($AGENTREE_API_KEY)")
	fs.BoolVar(&f.json, "json", false, "print JSON, for scripts")
	return fs
}

// stringsFlag collects a repeatable (or comma-separated) flag.
type stringsFlag []string

func (s *stringsFlag) String() string { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s = append(*s, p)
		}
	}
	return nil
}

type modelRef struct {
	Provider string `json:"provider"`
	ModelID  string `json:"modelId"`
}

// execution is the part of the API's AgentExecution the CLI shows.
type execution struct {
	ID         string          `json:"id"`
	Kind       string          `json:"kind"`
	Status     string          `json:"status"`
	StopReason string          `json:"stopReason"`
	Error      string          `json:"error"`
	StepCount  int             `json:"stepCount"`
	CreatedAt  string          `json:"createdAt"`
	Output     json.RawMessage `json:"output"`
}

// runRun starts an execution and shows it live.
func runRun(ctx context.Context, args []string) error {
	var f clientFlags
	var models, tools stringsFlag
	fs := clientFlagSet("run", &f)
	def := fs.String("definition", "", "start from this agent definition ID")
	kind := fs.String("kind", "react-agent", "agent kind (inline)")
	system := fs.String("system", "", "system prompt (inline)")
	mode := fs.String("mode", "", "one-shot or multi-turn")
	maxTurns := fs.Int("max-turns", 0, "most model calls (0: default)")
	chat := fs.Bool("chat", false, "multi-turn: read each follow-up from stdin when the agent waits")
	detach := fs.Bool("detach", false, "start and print the ID; do not follow")
	demo := fs.Bool("demo", false, "run the research sample (its prompt, tools and the demo model)")
	fs.Var(&models, "model", "provider/modelId, repeatable (first is primary)")
	fs.Var(&tools, "tool", "tool name, repeatable or comma-separated")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: agentree run [flags] PROMPT")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	prompt := strings.TrimSpace(strings.Join(fs.Args(), " "))
	if *demo {
		cfg := research.Config(demoModel())
		if prompt == "" {
			prompt = research.Prompt
		}
		*system = cfg.SystemPrompt
		models = nil
		for _, m := range cfg.Models {
			models = append(models, m.Key())
		}
		tools = cfg.Tools
		fmt.Fprintf(os.Stderr, "demo: the research sample on %s\n", cfg.Models[0].Key())
	}
	if prompt == "" {
		return errors.New("run: give the prompt as an argument (agentree run \"...\")")
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	body := map[string]any{"userPrompt": prompt}
	if *def != "" {
		body["agentDefinitionId"] = *def
	} else {
		body["kind"] = *kind
		if *system != "" {
			body["systemPrompt"] = *system
		}
		var refs []modelRef
		for _, m := range models {
			p, id, ok := strings.Cut(m, "/")
			if !ok || p == "" || id == "" {
				return fmt.Errorf("run: --model %q is not provider/modelId", m)
			}
			refs = append(refs, modelRef{p, id})
		}
		if len(refs) > 0 {
			body["models"] = refs
		}
		if len(tools) > 0 {
			body["tools"] = []string(tools)
		}
	}
	cfg := map[string]any{}
	if *mode != "" {
		cfg["mode"] = *mode
	}
	if *chat && *mode == "" {
		cfg["mode"] = "multi-turn"
	}
	if *maxTurns > 0 {
		cfg["maxTurns"] = *maxTurns
	}
	if len(cfg) > 0 {
		body["config"] = cfg
	}
	var ex execution
	if err := c.do(ctx, "POST", "/agent-executions", body, &ex); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if *detach {
		return printResult(f, ex, ex.ID)
	}
	st := newStyle(os.Stdout)
	if !f.json {
		fmt.Println(st.dim("execution " + ex.ID))
	}
	return follow(ctx, c, f, st, ex.ID, *chat)
}

// follow streams an execution until it waits (or, with chat, until it
// ends, sending each line of stdin when it waits). It reconnects with the
// last event ID when the stream breaks.
func follow(ctx context.Context, c *apiClient, f clientFlags, st style, id string, chat bool) error {
	view := &liveView{w: os.Stdout, st: st, since: time.Now()}
	stdin := bufio.NewScanner(os.Stdin)
	var lastID, failure string
	stopTicks := view.startTicking(250 * time.Millisecond)
	defer stopTicks()
	for attempt := 0; ; attempt++ {
		var finished bool
		var err error
		lastID, err = c.stream(ctx, id, lastID, func(ev sseEvent) bool {
			if f.json {
				fmt.Printf("{\"id\":%q,\"event\":%q,\"data\":%s}\n", ev.ID, ev.Event, ev.Data)
			}
			var stopped bool
			if f.json {
				stopped, failure = terminalOrWaiting(ev)
			} else {
				stopped, failure = view.show(ev)
			}
			if stopped {
				view.pause()
			}
			if !stopped {
				return false
			}
			if ev.Event == "agent.waiting" && chat {
				if !f.json {
					fmt.Print(st.bold("> "))
				}
				if !stdin.Scan() {
					finished = true
					return true
				}
				view.resume()
				if err := sendMessage(ctx, c, id, stdin.Text()); err != nil {
					failure = err.Error()
					finished = true
					return true
				}
				return false
			}
			finished = true
			return true
		})
		if finished || ctx.Err() != nil {
			break
		}
		if err != nil {
			var ae *apiError
			if errors.As(err, &ae) || attempt >= 5 {
				return err
			}
		}
	}
	if failure != "" {
		return errors.New(failure)
	}
	return ctx.Err()
}

func terminalOrWaiting(ev sseEvent) (bool, string) {
	d := decode(ev)
	switch ev.Event {
	case "agent.waiting", "agent.completed":
		return true, ""
	case "agent.failed":
		return true, "failed: " + d.Error
	case "agent.cancelled":
		return true, "cancelled"
	}
	return false, ""
}

func sendMessage(ctx context.Context, c *apiClient, id, text string) error {
	return c.do(ctx, "POST", "/agent-executions/"+url.PathEscape(id)+"/signal",
		map[string]any{"signalName": "userMessage", "signalValue": map[string]string{"text": text}}, nil)
}

// runSend sends a follow-up message to a waiting execution.
func runSend(ctx context.Context, args []string) error {
	var f clientFlags
	fs := clientFlagSet("send", &f)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: agentree send [flags] EXECUTION_ID MESSAGE")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return errors.New("send: give the execution ID and the message")
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	id := fs.Arg(0)
	if err := sendMessage(ctx, c, id, strings.Join(fs.Args()[1:], " ")); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	if f.json {
		fmt.Printf("{\"sent\":true,\"executionId\":%q}\n", id)
		return nil
	}
	fmt.Printf("sent; see the answer with: agentree show %s\n", id)
	return nil
}

// runList lists executions, newest first.
func runList(ctx context.Context, args []string) error {
	var f clientFlags
	fs := clientFlagSet("ls", &f)
	status := fs.String("status", "", "only this status")
	kind := fs.String("kind", "", "only this kind")
	limit := fs.Int("limit", 20, "how many")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	q := url.Values{}
	q.Set("pageSize", fmt.Sprint(*limit))
	if *status != "" {
		q.Set("status", strings.ToUpper(*status))
	}
	if *kind != "" {
		q.Set("kind", *kind)
	}
	var page struct {
		AgentExecutions []execution `json:"agentExecutions"`
	}
	if err := c.do(ctx, "GET", "/agent-executions?"+q.Encode(), nil, &page); err != nil {
		return fmt.Errorf("ls: %w", err)
	}
	if f.json {
		return json.NewEncoder(os.Stdout).Encode(page.AgentExecutions)
	}
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATUS\tSTEPS\tCREATED")
	for _, e := range page.AgentExecutions {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", e.ID, e.Kind, e.Status, e.StepCount, e.CreatedAt)
	}
	return tw.Flush()
}

type block struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Thinking string `json:"thinking"`
	ToolCall *struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"toolCall"`
}

type message struct {
	Role     string  `json:"role"`
	Content  []block `json:"content"`
	ToolName string  `json:"toolName"`
	IsError  bool    `json:"isError"`
}

// runShow prints an execution and its conversation.
func runShow(ctx context.Context, args []string) error {
	var f clientFlags
	fs := clientFlagSet("show", &f)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("show: give one execution ID")
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	id := url.PathEscape(fs.Arg(0))
	var ex execution
	if err := c.do(ctx, "GET", "/agent-executions/"+id, nil, &ex); err != nil {
		return fmt.Errorf("show: %w", err)
	}
	var msgs []message
	for cursor := ""; ; {
		var page struct {
			Messages   []message `json:"messages"`
			NextCursor string    `json:"nextCursor"`
		}
		path := "/agent-executions/" + id + "/messages?pageSize=500"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if err := c.do(ctx, "GET", path, nil, &page); err != nil {
			return fmt.Errorf("show: %w", err)
		}
		msgs = append(msgs, page.Messages...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if f.json {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"execution": ex, "messages": msgs})
	}
	st := newStyle(os.Stdout)
	fmt.Printf("%s %s %s\n\n", st.bold(ex.ID), ex.Kind, statusText(st, ex))
	for _, m := range msgs {
		printMessage(os.Stdout, st, m)
	}
	return nil
}

func statusText(st style, ex execution) string {
	s := ex.Status
	if ex.StopReason != "" {
		s += " (" + ex.StopReason + ")"
	}
	if ex.Error != "" {
		s += ": " + ex.Error
	}
	switch ex.Status {
	case "COMPLETED":
		return st.green(s)
	case "FAILED", "CANCELLED":
		return st.red(s)
	}
	return s
}

func printMessage(w io.Writer, st style, m message) {
	label := map[string]string{"user": "you", "assistant": "agent", "system": "system", "tool_result": "tool " + m.ToolName}[m.Role]
	fmt.Fprintln(w, st.bold(label+":"))
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text := b.Text
			if m.Role == "tool_result" && len(text) > 400 {
				text = text[:400] + "…"
			}
			fmt.Fprintln(w, text)
		case "thinking":
			fmt.Fprintln(w, st.dim(b.Thinking))
		case "tool_call":
			if b.ToolCall != nil {
				fmt.Fprintf(w, "%s %s %s\n", st.cyan("→"), b.ToolCall.Name, st.dim(string(b.ToolCall.Arguments)))
			}
		}
	}
	fmt.Fprintln(w)
}

// runCancel cancels an execution.
func runCancel(ctx context.Context, args []string) error {
	var f clientFlags
	fs := clientFlagSet("cancel", &f)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("cancel: give one execution ID")
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	var ex execution
	if err := c.do(ctx, "DELETE", "/agent-executions/"+url.PathEscape(fs.Arg(0)), nil, &ex); err != nil {
		return fmt.Errorf("cancel: %w", err)
	}
	return printResult(f, ex, ex.ID+" "+ex.Status)
}

func printResult(f clientFlags, v any, text string) error {
	if f.json {
		return json.NewEncoder(os.Stdout).Encode(v)
	}
	fmt.Println(text)
	return nil
}
