package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// liveWorkers answers what the live workers serve, from worker_capability
// (which workers keep fresh; see adapter.Options.CapabilityInterval). A
// snapshot is reused for ttl so creates stay one cheap query away from it;
// a request the snapshot would refuse is checked again against a fresh one,
// so a worker that just started is never refused for a cached absence.
type liveWorkers struct {
	es        *entrystore.Store
	ttl       time.Duration
	namespace string // "" = every namespace

	mu   sync.Mutex
	at   time.Time
	rows []entrystore.WorkerCapability
}

// get returns a snapshot no older than ttl, or a fresh one if fresh.
func (l *liveWorkers) get(ctx context.Context, fresh bool) ([]entrystore.WorkerCapability, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !fresh && !l.at.IsZero() && time.Since(l.at) < l.ttl {
		return l.rows, nil
	}
	rows, err := l.es.LiveCapabilities(ctx)
	if err != nil {
		return nil, err
	}
	if l.namespace != "" {
		rows = slices.DeleteFunc(rows, func(c entrystore.WorkerCapability) bool {
			return c.Namespace != "" && c.Namespace != l.namespace
		})
	}
	l.rows, l.at = rows, time.Now()
	return rows, nil
}

// check runs fn over a snapshot and, if it refuses, over a fresh one.
func (l *liveWorkers) check(ctx context.Context, fn func([]entrystore.WorkerCapability) error) error {
	rows, err := l.get(ctx, false)
	if err != nil {
		return err
	}
	if fn(rows) == nil {
		return nil
	}
	if rows, err = l.get(ctx, true); err != nil {
		return err
	}
	return fn(rows)
}

// served checks that live workers on queue run kind and everything cfg
// names for organization orgID: a 503 when no worker polls the queue, a
// 400 listing what they offer when one of the names is not served there
// (or saying why, for a tool the operator forbids the organization).
func served(rows []entrystore.WorkerCapability, orgID, queue, kind string, cfg agentsdk.Config) error {
	var onQueue, elsewhere []entrystore.WorkerCapability
	for _, r := range rows {
		if r.TaskQueue == queue {
			onQueue = append(onQueue, r)
		} else {
			elsewhere = append(elsewhere, r)
		}
	}
	if len(onQueue) == 0 {
		msg := fmt.Sprintf("no live worker serves task queue %q, so the execution would never run; start one "+
			"(agentree worker --task-queue %s, or a worker built with the adapter plugin) and retry", queue, queue)
		if qs := queues(elsewhere); len(qs) > 0 {
			msg += fmt.Sprintf(" (live workers serve task queues: %s)", strings.Join(qs, ", "))
		}
		return status.Error(codes.Unavailable, msg)
	}
	return offers(onQueue, orgID, fmt.Sprintf("on task queue %q", queue), kind, cfg)
}

// offers checks kind and cfg's tools and models against rows as
// organization orgID sees them (forOrg), which are described as where in
// messages.
func offers(rows []entrystore.WorkerCapability, orgID, where, kind string, cfg agentsdk.Config) error {
	var problems []string
	rows, forbidden := forOrg(rows, orgID)
	u := union(rows)
	if kind != "" && !slices.Contains(u.kinds, kind) {
		problems = append(problems, fmt.Sprintf("unknown agent kind %q: live workers %s run %s", kind, where, listed(u.kinds)))
	}
	for _, t := range cfg.Tools {
		if _, ok := u.tools[t]; ok {
			continue
		}
		if forbidden[t] {
			problems = append(problems, agentsdk.ForbiddenMessage(t, true))
			continue
		}
		problems = append(problems, fmt.Sprintf("unknown tool %q: live workers %s offer %s", t, where, listed(sortedKeys(u.tools))))
	}
	for i, t := range cfg.ClientTools {
		if _, ok := u.tools[t.Name]; ok {
			problems = append(problems, fmt.Sprintf("clientTools[%d].name %q is the name of a tool live workers %s run: a client tool needs a name of its own", i, t.Name, where))
		}
	}
	for i, m := range cfg.Models {
		if u.servesUnpriced(m) {
			problems = append(problems, fmt.Sprintf("models[%d] %s: the model has no price on the live workers %s, so its cost could not be counted; "+
				"their operator gives it one or marks it unpriced in the worker configuration", i, describeRef(m), where))
		} else if !u.serves(m) {
			problems = append(problems, fmt.Sprintf("models[%d] %s: no live worker %s serves it; they offer %s%s",
				i, describeRef(m), where, u.describeModels(), u.providerHint(m.Provider)))
		}
	}
	if m := cfg.Budget; m != nil && m.DowngradeModel != nil && !u.serves(*m.DowngradeModel) {
		problems = append(problems, fmt.Sprintf("budget.downgradeModel %s: no live worker %s serves it; they offer %s%s",
			describeRef(*m.DowngradeModel), where, u.describeModels(), u.providerHint(m.DowngradeModel.Provider)))
	}
	if len(problems) > 0 {
		return invalid("%s", strings.Join(problems, "; "))
	}
	return nil
}

// forOrg is rows as organization orgID sees them: without the tools the
// operator forbids it (listed in forbidden), which it is neither shown nor
// allowed to name.
func forOrg(rows []entrystore.WorkerCapability, orgID string) (out []entrystore.WorkerCapability, forbidden map[string]bool) {
	forbidden = map[string]bool{}
	out = make([]entrystore.WorkerCapability, len(rows))
	for i, r := range rows {
		r.Tools = slices.DeleteFunc(slices.Clone(r.Tools), func(t entrystore.CapabilityTool) bool {
			if t.Orgs != nil && !slices.Contains(t.Orgs, orgID) {
				// Served to other organizations only (an MCP server
				// enabled per organization): unknown to this one.
				return true
			}
			f := t.PolicyFor(orgID) == entrystore.ToolForbidden
			forbidden[t.Name] = forbidden[t.Name] || f
			return f
		})
		out[i] = r
	}
	return out, forbidden
}

// providerHint says how to serve provider when no live worker has an
// endpoint of it at all.
func (u capUnion) providerHint(provider string) string {
	for _, e := range u.models {
		if e.Provider == provider {
			return ""
		}
	}
	return agentsdk.ProviderHint(provider)
}

func describeRef(m agentsdk.ModelRef) string {
	s := fmt.Sprintf("provider %q model %q", m.Provider, m.ModelID)
	if m.Endpoint != "" {
		s += fmt.Sprintf(" on endpoint %q", m.Endpoint)
	}
	return s
}

func listed(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// capUnion is the union of some workers' capabilities.
type capUnion struct {
	kinds  []string
	tools  map[string]*pb.ToolCapability
	models map[string]*pb.ModelEndpoint // by endpoint name
	// infos are the endpoints as the workers describe them, prices
	// included: what serves decides by.
	infos []agentsdk.EndpointInfo
}

func union(rows []entrystore.WorkerCapability) capUnion {
	u := capUnion{tools: map[string]*pb.ToolCapability{}, models: map[string]*pb.ModelEndpoint{}}
	for _, r := range rows {
		for _, k := range r.Kinds {
			if !slices.Contains(u.kinds, k) {
				u.kinds = append(u.kinds, k)
			}
		}
		for _, t := range r.Tools {
			tc, ok := u.tools[t.Name]
			if !ok {
				tc = toTool(t)
				u.tools[t.Name] = tc
			}
			if !slices.Contains(tc.TaskQueues, r.TaskQueue) {
				tc.TaskQueues = append(tc.TaskQueues, r.TaskQueue)
			}
		}
		for _, m := range r.Models {
			u.infos = append(u.infos, agentsdk.EndpointInfo{Name: m.Name, Provider: m.Provider, Models: m.Models, Priced: m.Priced})
			me, ok := u.models[m.Name]
			if !ok {
				me = &pb.ModelEndpoint{Name: m.Name, Provider: m.Provider}
				u.models[m.Name] = me
			}
			for _, id := range m.Models {
				if !slices.Contains(me.Models, id) {
					me.Models = append(me.Models, id)
				}
			}
			if !slices.Contains(me.TaskQueues, r.TaskQueue) {
				me.TaskQueues = append(me.TaskQueues, r.TaskQueue)
			}
		}
	}
	sort.Strings(u.kinds)
	return u
}

// serves reports whether an endpoint of the union serves m: same provider,
// the model allowed ("*" allows any), and the endpoint m names if it names
// one.
func (u capUnion) serves(m agentsdk.ModelRef) bool {
	return u.find(m, func(e agentsdk.EndpointInfo) bool { return e.Allows(m.ModelID) && e.HasPrice(m.ModelID) })
}

// servesUnpriced reports whether endpoints of the union allow m but none
// of them has a price for it: the worker would refuse it.
func (u capUnion) servesUnpriced(m agentsdk.ModelRef) bool {
	return !u.serves(m) && u.find(m, func(e agentsdk.EndpointInfo) bool { return e.Allows(m.ModelID) })
}

// find reports whether an endpoint of m's provider (the one m names, if
// it names one) satisfies ok.
func (u capUnion) find(m agentsdk.ModelRef, ok func(agentsdk.EndpointInfo) bool) bool {
	for _, e := range u.infos {
		if e.Provider == m.Provider && (m.Endpoint == "" || e.Name == m.Endpoint) && ok(e) {
			return true
		}
	}
	return false
}

func (u capUnion) describeModels() string {
	var out []string
	for _, name := range sortedKeys(u.models) {
		e := u.models[name]
		out = append(out, fmt.Sprintf("endpoint %q (provider %q, models %s)", e.Name, e.Provider, strings.Join(e.Models, ", ")))
	}
	return listed(out)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func queues(rows []entrystore.WorkerCapability) []string {
	var qs []string
	for _, r := range rows {
		if !slices.Contains(qs, r.TaskQueue) {
			qs = append(qs, r.TaskQueue)
		}
	}
	sort.Strings(qs)
	return qs
}

func toTool(t entrystore.CapabilityTool) *pb.ToolCapability {
	tc := &pb.ToolCapability{Name: t.Name, Description: t.Description}
	var params map[string]any
	if len(t.Parameters) > 0 && json.Unmarshal(t.Parameters, &params) == nil {
		// A schema Struct cannot hold is shown as none rather than failing
		// the whole listing.
		tc.Parameters, _ = structpb.NewStruct(params)
	}
	return tc
}

// GetCapabilities lists what the live workers serve the organization:
// every kind and model, and the tools but those the operator forbids it.
func (s *service) GetCapabilities(ctx context.Context, req *pb.GetCapabilitiesRequest) (*pb.Capabilities, error) {
	org, err := s.authorize(ctx, req.GetOrg())
	if err != nil {
		return nil, err
	}
	rows, err := s.v.live.get(ctx, false)
	if err != nil {
		return nil, toStatus(s.log, "list worker capabilities", err)
	}
	rows, _ = forOrg(rows, org.ID)
	out := &pb.Capabilities{Workers: []*pb.WorkerCapabilities{}, Roles: s.callerRoles(ctx)}
	for _, r := range rows {
		w := &pb.WorkerCapabilities{
			Identity: r.Identity, TaskQueue: r.TaskQueue, Version: r.Version, LastSeenAt: ts(r.LastSeen),
			Kinds: r.Kinds, Tools: []*pb.ToolCapability{}, Models: []*pb.ModelEndpoint{},
		}
		for _, t := range r.Tools {
			w.Tools = append(w.Tools, toTool(t))
		}
		for _, m := range r.Models {
			w.Models = append(w.Models, &pb.ModelEndpoint{Name: m.Name, Provider: m.Provider, Models: m.Models})
		}
		out.Workers = append(out.Workers, w)
	}
	u := union(rows)
	out.Kinds = u.kinds
	for _, name := range sortedKeys(u.tools) {
		out.Tools = append(out.Tools, u.tools[name])
	}
	for _, name := range sortedKeys(u.models) {
		out.Models = append(out.Models, u.models[name])
	}
	return out, nil
}
