package a2a

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/apiclient"
	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

// URLEnv and KeyEnv name where the lead's worker reads the specialist's
// A2A URL and an API key of its organization (with the run role). The
// operator configures them; an execution can only name the agent.
const (
	URLEnv = "SPECIALIST_A2A_URL"
	KeyEnv = "SPECIALIST_API_KEY"
)

// SpecialistURL is the A2A URL of the specialist's definition on the
// gateway g: its card is at …/.well-known/agent-card.json under it.
func SpecialistURL(g sampleenv.Gateway) string {
	return g.URL + "/a2a/" + url.PathEscape(g.Org) + "/" + SpecialistSlug
}

// Remote is the specialist as the lead's worker configures it.
func Remote(a2aURL, key string) agentsdk.RemoteAgent {
	return agentsdk.RemoteAgent{Name: RemoteName, URL: a2aURL, Token: key,
		Description: "another deployment's storage specialist", PollInterval: 200 * time.Millisecond}
}

// RemoteFromEnv is Remote from URLEnv and KeyEnv; when they are unset,
// from the gateway the specialist's worker published in sampleenv.Dir
// (both workers run from one checkout when you try the sample).
func RemoteFromEnv() (agentsdk.RemoteAgent, error) {
	a2aURL, key := os.Getenv(URLEnv), os.Getenv(KeyEnv)
	if a2aURL == "" || key == "" {
		g, err := sampleenv.Published(sampleenv.Dir(), SpecialistTaskQueue)
		if err != nil {
			return agentsdk.RemoteAgent{}, fmt.Errorf("set %s and %s, or start the specialist first (go run ./samples/a2a/specialist): %w", URLEnv, KeyEnv, err)
		}
		a2aURL, key = SpecialistURL(g), g.Key
	}
	return Remote(a2aURL, key), nil
}

// Expose creates the specialist's definition, served over A2A, through
// the specialist's REST API; one an earlier run created is kept.
func Expose(ctx context.Context, specialist *apiclient.Client) error {
	err := specialist.Do(ctx, http.MethodPost, "/agent-definitions", SpecialistDefinition(), nil)
	if apiclient.StatusOf(err) == http.StatusConflict {
		return nil
	}
	if err != nil {
		return fmt.Errorf("expose the specialist: %w", err)
	}
	return nil
}

// Run exposes the specialist, starts the lead on Question through the
// lead's REST API and streams it to w until it ends.
func Run(ctx context.Context, specialist, lead *apiclient.Client, w io.Writer) (*agentreev1.AgentExecution, error) {
	if err := Expose(ctx, specialist); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "specialist served over A2A at %s/a2a/%s/%s\n", specialist.Base(), specialist.Org(), SpecialistSlug)
	ex, err := sampleenv.Create(ctx, lead, react.Kind, LeadConfig(), Question)
	if err != nil {
		return nil, fmt.Errorf("start the lead: %w", err)
	}
	fmt.Fprintf(w, "lead %s\nuser: %s\n\n", ex.GetId(), Question)
	ex, err = sampleenv.Follow(ctx, lead, ex.GetId(), w, sampleenv.Ended)
	if err != nil {
		return ex, err
	}
	if ex.GetStatus() != "COMPLETED" {
		return ex, errors.New("the lead ended " + ex.GetStatus() + ": " + ex.GetError())
	}
	return ex, nil
}
