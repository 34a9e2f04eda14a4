package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/pgtest"
)

// rowOnly starts executions as far as the store: the row, with the
// store's own checks, and no workflow.
type rowOnly struct{ es *entrystore.Store }

func (r rowOnly) Start(ctx context.Context, req client.StartRequest) (entrystore.Execution, error) {
	cfg, err := json.Marshal(req.Config)
	if err != nil {
		return entrystore.Execution{}, err
	}
	return r.es.CreateExecution(ctx, entrystore.Execution{
		OrgID: req.OrgID, Kind: req.Kind, DefinitionID: req.DefinitionID, ParentID: req.ParentID,
		Config: cfg, Metadata: req.Metadata,
	})
}

func (rowOnly) SignalOnce(context.Context, string, string, string, string, json.RawMessage) (entrystore.Signal, error) {
	return entrystore.Signal{}, errors.New("rowOnly: no signals")
}

func (rowOnly) Cancel(context.Context, string, string) (entrystore.Execution, error) {
	return entrystore.Execution{}, errors.New("rowOnly: no cancel")
}

func (rowOnly) Resume(context.Context, client.ResumeRequest) (entrystore.Execution, error) {
	return entrystore.Execution{}, errors.New("rowOnly: no resume")
}

func (rowOnly) Fork(context.Context, client.ForkRequest) (entrystore.Execution, error) {
	return entrystore.Execution{}, errors.New("rowOnly: no fork")
}

func (rowOnly) Explain(context.Context, client.ExplainInput) error {
	return errors.New("rowOnly: no explanations")
}

func (rowOnly) SummariseBranch(context.Context, entrystore.Execution, client.BranchSummaryInput) (string, error) {
	return "", errors.New("rowOnly: no branch summary")
}

func (rowOnly) ScheduleFollowUp(context.Context, string, string, string, string, time.Time) (entrystore.FollowUp, error) {
	return entrystore.FollowUp{}, errors.New("rowOnly: no follow-ups")
}

func (rowOnly) CancelFollowUp(context.Context, string, string, string) (entrystore.FollowUp, error) {
	return entrystore.FollowUp{}, errors.New("rowOnly: no follow-ups")
}

// FuzzDecodeCreateExecution sends arbitrary bodies to the create-execution
// endpoint through the real REST stack (auth, body limit, grpc-gateway's
// decoding, config merge and validation, the store's checks): it never
// panics and never answers 5xx, and every refusal is a {code, message}.
// The seed corpus is testdata/fuzz/FuzzDecodeCreateExecution.
func FuzzDecodeCreateExecution(f *testing.F) {
	f.Add([]byte(`{"userPrompt":"hi","models":[{"provider":"scripted","modelId":"m"}]}`))
	f.Add([]byte(`{"userPrompt":"hi","config":{"maxTurns":-1}}`))
	ctx := context.Background()
	es := entrystore.New(pgtest.New(f))
	org, err := es.CreateOrg(ctx, "fuzz", "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	key, _, err := es.CreateAPIKey(ctx, org.ID, "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	o, err := Options{Store: es, Executions: &client.Client{},
		BodyLimit: 4 << 10, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}.validate()
	if err != nil {
		f.Fatal(err)
	}
	// What a worker with the scripted model and an echo tool records; the
	// fuzz run has no worker, and needs none: rowOnly starts nothing.
	err = es.RecordCapability(ctx, entrystore.WorkerCapability{
		Identity: "fuzz", TaskQueue: o.TaskQueue, Kinds: []string{entrystore.DefaultKind},
		Tools:  []entrystore.CapabilityTool{{Name: "echo", Parameters: []byte(`{"type":"object"}`)}},
		Models: []entrystore.CapabilityModels{{Name: "scripted", Provider: "scripted", Models: []string{"*"}}},
	}, time.Hour)
	if err != nil {
		f.Fatal(err)
	}
	svc := &service{es: es, ex: rowOnly{es}, v: newValidator(o), log: o.Logger}
	h, err := newHTTPHandler(svc, o.BodyLimit)
	if err != nil {
		f.Fatal(err)
	}
	path := "/api/orgs/" + org.Slug + "/agent-executions"

	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%d for %q: %s", rec.Code, body, rec.Body)
		}
		var got map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("%d non-JSON answer for %q: %s", rec.Code, body, rec.Body)
		}
		if rec.Code == http.StatusOK {
			if got["id"] == "" || got["status"] != "PENDING" {
				t.Fatalf("accepted %q but answered %s", body, rec.Body)
			}
			return
		}
		code, _ := got["code"].(string)
		msg, _ := got["message"].(string)
		if len(got) != 2 || code == "" || msg == "" {
			t.Fatalf("%d for %q is not {code, message}: %s", rec.Code, body, rec.Body)
		}
	})
}
