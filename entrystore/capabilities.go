package entrystore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// WorkerCapability is what one worker on one task queue serves: the row a
// running worker keeps fresh in worker_capability.
//
// Capabilities are not org-scoped, unlike everything else in this store: a
// worker serves every organization and its row holds no tenant data, so
// these methods take no org.
type WorkerCapability struct {
	Identity  string             `json:"identity"`
	TaskQueue string             `json:"taskQueue"`
	Namespace string             `json:"namespace,omitempty"`
	Version   string             `json:"version"`
	Kinds     []string           `json:"kinds"`
	Tools     []CapabilityTool   `json:"tools"`
	Models    []CapabilityModels `json:"models"`
	StartedAt time.Time          `json:"startedAt"`
	LastSeen  time.Time          `json:"lastSeenAt"`
	// LeaseExpires is when the row stops counting unless refreshed.
	LeaseExpires time.Time `json:"leaseExpiresAt"`
}

// CapabilityTool is one tool a worker runs, with its arguments' JSON
// Schema.
type CapabilityTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// Orgs are the organizations (by ID) the tool is served to; nil:
	// every one (agentsdk.Tool.Orgs).
	Orgs []string `json:"orgs,omitempty"`
	// Policy is the operator's ceiling on the tool's calls (auto, ask or
	// forbid; "" from a worker that records none: auto) for organizations
	// the worker does not configure apart, and OrgPolicies the ceiling of
	// each it does, by organization ID, where that differs.
	Policy      string            `json:"policy,omitempty"`
	OrgPolicies map[string]string `json:"orgPolicies,omitempty"`
	// ReadOnly: the tool changes nothing (agentsdk.Tool.ReadOnly), so a
	// counterfactual branch runs its new calls without asking.
	ReadOnly bool `json:"readOnly,omitempty"`
}

// ToolForbidden is the ceiling that keeps a tool from an organization.
const ToolForbidden = "forbid"

// PolicyFor is the operator's ceiling on the tool's calls by organization
// orgID.
func (t CapabilityTool) PolicyFor(orgID string) string {
	if p, ok := t.OrgPolicies[orgID]; ok {
		return p
	}
	return t.Policy
}

// CapabilityModels is one named model endpoint a worker calls: its
// provider kind and the model IDs it allows ("*" allows any).
type CapabilityModels struct {
	Name     string   `json:"name"`
	Provider string   `json:"provider"`
	Models   []string `json:"models"`
	// Priced is agentsdk.EndpointInfo.Priced: nil, or the only models the
	// endpoint serves among those Models allows.
	Priced []string `json:"priced,omitempty"`
}

// RecordCapability upserts c by identity and task queue and moves its
// lease lease past now (the database's clock, so workers' clocks do not
// matter). StartedAt is kept from the first record. Rows whose lease ran
// out an hour ago are deleted on the way, so dead workers do not pile up.
func (s *Store) RecordCapability(ctx context.Context, c WorkerCapability, lease time.Duration) error {
	const op = "record worker capability"
	if c.Identity == "" || c.TaskQueue == "" {
		return errf(op, ErrInvalid, "identity and task queue are required")
	}
	if lease <= 0 {
		return errf(op, ErrInvalid, "lease must be positive, got %s", lease)
	}
	kinds, tools, models, err := capabilityJSON(c)
	if err != nil {
		return errf(op, ErrInvalid, "%v", err)
	}
	_, err = s.pool.Exec(ctx, `
		WITH pruned AS (
			DELETE FROM worker_capability WHERE lease_expires_at < now() - interval '1 hour'
		)
		INSERT INTO worker_capability
			(identity, task_queue, namespace, version, kinds, tools, models, started_at, last_seen_at, lease_expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, now(), now(), now() + make_interval(secs => $8))
		ON CONFLICT (identity, task_queue) DO UPDATE SET
			namespace = EXCLUDED.namespace, version = EXCLUDED.version, kinds = EXCLUDED.kinds,
			tools = EXCLUDED.tools, models = EXCLUDED.models,
			last_seen_at = EXCLUDED.last_seen_at, lease_expires_at = EXCLUDED.lease_expires_at`,
		c.Identity, c.TaskQueue, c.Namespace, c.Version, kinds, tools, models, lease.Seconds())
	return wrap(op, err)
}

func capabilityJSON(c WorkerCapability) (kinds, tools, models []byte, err error) {
	if c.Kinds == nil {
		c.Kinds = []string{}
	}
	if c.Tools == nil {
		c.Tools = []CapabilityTool{}
	}
	if c.Models == nil {
		c.Models = []CapabilityModels{}
	}
	if kinds, err = json.Marshal(c.Kinds); err != nil {
		return nil, nil, nil, fmt.Errorf("kinds: %w", err)
	}
	if tools, err = json.Marshal(c.Tools); err != nil {
		return nil, nil, nil, fmt.Errorf("tools: %w", err)
	}
	if models, err = json.Marshal(c.Models); err != nil {
		return nil, nil, nil, fmt.Errorf("models: %w", err)
	}
	return kinds, tools, models, nil
}

// DeleteCapability removes a worker's row, on its clean stop.
func (s *Store) DeleteCapability(ctx context.Context, identity, taskQueue string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM worker_capability WHERE identity = $1 AND task_queue = $2`, identity, taskQueue)
	return wrap("delete worker capability", err)
}

// QueueLive reports whether a worker polls taskQueue now: a row of it
// whose lease has not run out.
func (s *Store) QueueLive(ctx context.Context, taskQueue string) (bool, error) {
	var live bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM worker_capability WHERE task_queue = $1 AND lease_expires_at > now())`,
		taskQueue).Scan(&live)
	return live, wrap("queue live", err)
}

// LiveCapabilities lists the rows whose lease has not run out, by task
// queue then identity.
func (s *Store) LiveCapabilities(ctx context.Context) ([]WorkerCapability, error) {
	const op = "list live worker capabilities"
	rows, err := s.pool.Query(ctx, `
		SELECT identity, task_queue, namespace, version, kinds, tools, models, started_at, last_seen_at, lease_expires_at
		FROM worker_capability WHERE lease_expires_at > now()
		ORDER BY task_queue, identity`)
	if err != nil {
		return nil, wrap(op, err)
	}
	defer rows.Close()
	var out []WorkerCapability
	for rows.Next() {
		var c WorkerCapability
		var kinds, tools, models []byte
		if err := rows.Scan(&c.Identity, &c.TaskQueue, &c.Namespace, &c.Version, &kinds, &tools, &models,
			&c.StartedAt, &c.LastSeen, &c.LeaseExpires); err != nil {
			return nil, wrap(op, err)
		}
		if err := json.Unmarshal(kinds, &c.Kinds); err != nil {
			return nil, wrap(op, fmt.Errorf("kinds of %s: %w", c.Identity, err))
		}
		if err := json.Unmarshal(tools, &c.Tools); err != nil {
			return nil, wrap(op, fmt.Errorf("tools of %s: %w", c.Identity, err))
		}
		if err := json.Unmarshal(models, &c.Models); err != nil {
			return nil, wrap(op, fmt.Errorf("models of %s: %w", c.Identity, err))
		}
		out = append(out, c)
	}
	return out, wrap(op, rows.Err())
}
