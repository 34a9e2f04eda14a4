package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// capabilities is GET /api/orgs/{org}/capabilities: what the live workers
// offer, per worker and merged. A small local type until the API's
// generated one exists; unknown fields are ignored.
type capabilities struct {
	Workers []struct {
		Identity   string          `json:"identity"`
		TaskQueue  string          `json:"taskQueue"`
		Version    string          `json:"version"`
		LastSeenAt string          `json:"lastSeenAt"`
		Kinds      []string        `json:"kinds"`
		Tools      []capTool       `json:"tools"`
		Models     []capModelGroup `json:"models"`
	} `json:"workers"`
	Kinds  []string        `json:"kinds"`
	Tools  []capTool       `json:"tools"`
	Models []capModelGroup `json:"models"`
}

type capTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	TaskQueues  []string        `json:"taskQueues"`
}

// capModelGroup is one model endpoint: its name (what a model reference's
// provider part names), the provider behind it and its models.
type capModelGroup struct {
	Name       string   `json:"name"`
	Provider   string   `json:"provider"`
	Models     []string `json:"models"`
	TaskQueues []string `json:"taskQueues"`
}

// ref is the provider/modelId a request names for model on this endpoint.
func (g capModelGroup) ref(model string) string {
	provider := g.Provider
	if provider == "" {
		provider = g.Name
	}
	return provider + "/" + model
}

// offers reports whether the endpoint serves ref: a listed model, or any
// model of its provider when it allows "*".
func (g capModelGroup) offers(ref string) bool {
	for _, m := range g.Models {
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

func fetchCapabilities(ctx context.Context, c *apiClient) (*capabilities, []byte, error) {
	resp, err := c.request(ctx, http.MethodGet, "/capabilities", nil)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
			return nil, nil, errNoCapabilities
		}
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("capabilities: %w", err)
	}
	var caps capabilities
	if err := json.Unmarshal(b, &caps); err != nil {
		return nil, nil, fmt.Errorf("capabilities: %w", err)
	}
	return &caps, b, nil
}

// defaultModelAndTools picks run's model (when model is "") and tools: the
// scripted demo model when a worker offers it, else the first model
// offered; every tool offered on that model's task queues. note, when not
// empty, tells the user what was chosen and why.
func defaultModelAndTools(ctx context.Context, c *apiClient, model string) (string, []string, string, error) {
	caps, _, err := fetchCapabilities(ctx, c)
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
	for _, g := range caps.Models {
		if g.offers(want) {
			model, queues = want, g.TaskQueues
			break
		}
	}
	if model == "" {
		// Only a named model can be a default: an endpoint that allows any
		// model ("*") cannot say which one to use.
		for _, g := range caps.Models {
			if i := slices.IndexFunc(g.Models, func(m string) bool { return m != "*" }); i >= 0 {
				model, queues = g.ref(g.Models[i]), g.TaskQueues
				break
			}
		}
	}
	if model == "" {
		return "", nil, "", errors.New("no worker names a model to default to: pass --model provider/modelId (agentree tools lists the endpoints), or start a worker (make run, or agentree worker)")
	}
	var tools []string
	for _, t := range caps.Tools {
		if len(queues) == 0 || len(t.TaskQueues) == 0 || slices.ContainsFunc(t.TaskQueues, func(q string) bool { return slices.Contains(queues, q) }) {
			tools = append(tools, t.Name)
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
			caps, raw, err := fetchCapabilities(cmd.Context(), c)
			if err != nil {
				return fmt.Errorf("tools: %w", err)
			}
			out := cmd.OutOrStdout()
			if f.json {
				_, err := fmt.Fprintf(out, "%s\n", strings.TrimSpace(string(raw)))
				return err
			}
			return printCapabilities(out, caps)
		},
	}
	addClientFlags(cmd, &f)
	return cmd
}

func printCapabilities(w io.Writer, caps *capabilities) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	if len(caps.Workers) == 0 {
		fmt.Fprintln(tw, "no live workers (start one: make run, or agentree worker)")
	} else {
		fmt.Fprintln(tw, "WORKER\tTASK QUEUE\tVERSION\tLAST SEEN\tKINDS")
		for _, wk := range caps.Workers {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", wk.Identity, wk.TaskQueue, wk.Version, wk.LastSeenAt, strings.Join(wk.Kinds, ","))
		}
	}
	fmt.Fprintln(tw, "\nTOOL\tTASK QUEUES\tDESCRIPTION")
	for _, t := range caps.Tools {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, strings.Join(t.TaskQueues, ","), firstLine(t.Description))
	}
	fmt.Fprintln(tw, "\nMODEL\tPROVIDER\tTASK QUEUES")
	for _, g := range caps.Models {
		for _, m := range g.Models {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", g.ref(m), g.Provider, strings.Join(g.TaskQueues, ","))
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
