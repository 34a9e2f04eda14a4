package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentree/agentree/apiclient"
	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
)

// capModelGroup is one model endpoint of GET …/capabilities.
type capModelGroup struct{ *agentreev1.ModelEndpoint }

func (g capModelGroup) ref(model string) string {
	provider := g.GetProvider()
	if provider == "" {
		provider = g.GetName()
	}
	return provider + "/" + model
}

// offers reports whether the endpoint serves ref: a listed model, or any
// model of its provider when it allows "*".
func (g capModelGroup) offers(ref string) bool {
	for _, m := range g.GetModels() {
		if g.ref(m) == ref || (m == "*" && strings.HasPrefix(ref, g.ref(""))) {
			return true
		}
	}
	return false
}

// errNoCapabilities: the gateway predates GET .../capabilities.
var errNoCapabilities = errors.New("the gateway does not serve capabilities yet")

// The scripted demo model and the research tools `make run`'s dev worker
// serves: run's defaults when the gateway cannot say what workers offer.
const demoModelRef = "scripted/scripted-1"

var demoTools = []string{"search_notes", "fetch_note", "word_count"}

func fetchCapabilities(ctx context.Context, c *apiclient.Client) (*agentreev1.Capabilities, error) {
	caps := &agentreev1.Capabilities{}
	if err := c.Do(ctx, http.MethodGet, "/capabilities", nil, caps); err != nil {
		if apiclient.StatusOf(err) == http.StatusNotFound {
			return nil, errNoCapabilities
		}
		return nil, err
	}
	return caps, nil
}

// defaultModelAndTools picks run's model (when model is "") and tools: the
// scripted demo model when a worker offers it, else the first model
// offered; every tool offered on that model's task queues. note, when not
// empty, tells the user what was chosen and why.
func defaultModelAndTools(ctx context.Context, c *apiclient.Client, model string) (string, []string, string, error) {
	caps, err := fetchCapabilities(ctx, c)
	if errors.Is(err, errNoCapabilities) {
		if model == "" {
			model = demoModelRef
		}
		return model, demoTools, fmt.Sprintf("run: the gateway does not list what its workers offer; using --model %s --tool %s (what `make run`'s dev worker serves)",
			model, strings.Join(demoTools, ",")), nil
	}
	if err != nil {
		return "", nil, "", err
	}
	var queues []string
	want := model
	if want == "" {
		want = demoModelRef
	}
	for _, m := range caps.GetModels() {
		if g := (capModelGroup{m}); g.offers(want) {
			model, queues = want, g.GetTaskQueues()
			break
		}
	}
	if model == "" {
		// Only a named model can be a default: an endpoint that allows any
		// model ("*") cannot say which one to use.
		for _, m := range caps.GetModels() {
			if i := slices.IndexFunc(m.GetModels(), func(id string) bool { return id != "*" }); i >= 0 {
				model, queues = capModelGroup{m}.ref(m.GetModels()[i]), m.GetTaskQueues()
				break
			}
		}
	}
	if model == "" {
		return "", nil, "", errors.New("no worker names a model to default to: pass --model provider/modelId (agentree tools lists the endpoints), or start a worker (make run, or agentree worker)")
	}
	var tools []string
	for _, t := range caps.GetTools() {
		if len(queues) == 0 || len(t.GetTaskQueues()) == 0 || slices.ContainsFunc(t.GetTaskQueues(), func(q string) bool { return slices.Contains(queues, q) }) {
			tools = append(tools, t.GetName())
		}
	}
	return model, tools, fmt.Sprintf("run: --model %s --tool %s (offered by the workers; agentree tools lists them)", model, strings.Join(tools, ",")), nil
}

func toolsCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "tools [flags]",
		Short: "List what live workers offer: agent kinds, tools and models",
		Long: `List what the workers polling the gateway's task queues offer: each worker
with its kinds, then every tool and model with the task queues serving it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			caps, err := fetchCapabilities(cmd.Context(), c)
			if err != nil {
				return fmt.Errorf("tools: %w", err)
			}
			out := cmd.OutOrStdout()
			if f.json {
				_, err := fmt.Fprintf(out, "%s\n", compactJSON(caps))
				return err
			}
			return printCapabilities(out, caps)
		},
	}
	addClientFlags(cmd, &f)
	return cmd
}

func printCapabilities(w io.Writer, caps *agentreev1.Capabilities) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	if len(caps.GetWorkers()) == 0 {
		fmt.Fprintln(tw, "no live workers (start one: make run, or agentree worker)")
	} else {
		fmt.Fprintln(tw, "WORKER\tTASK QUEUE\tVERSION\tLAST SEEN\tKINDS")
		for _, wk := range caps.GetWorkers() {
			seen := wk.GetLastSeenAt().AsTime().Format(time.RFC3339)
			fmt.Fprint(tw, clean(fmt.Sprintf("%s\t%s\t%s\t%s\t%s\n", wk.GetIdentity(), wk.GetTaskQueue(), wk.GetVersion(), seen, strings.Join(wk.GetKinds(), ","))))
		}
	}
	fmt.Fprintln(tw, "\nTOOL\tTASK QUEUES\tDESCRIPTION")
	for _, t := range caps.GetTools() {
		// An MCP server writes tool descriptions: they are cleaned too.
		fmt.Fprint(tw, clean(fmt.Sprintf("%s\t%s\t%s\n", t.GetName(), strings.Join(t.GetTaskQueues(), ","), firstLine(t.GetDescription()))))
	}
	fmt.Fprintln(tw, "\nMODEL\tPROVIDER\tTASK QUEUES")
	for _, g := range caps.GetModels() {
		for _, m := range g.GetModels() {
			fmt.Fprint(tw, clean(fmt.Sprintf("%s\t%s\t%s\n", capModelGroup{g}.ref(m), g.GetProvider(), strings.Join(g.GetTaskQueues(), ","))))
		}
	}
	return tw.Flush()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}
