package gateway

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// Route is one REST route of an AgentService RPC with the RPC's access
// declaration (proto/agentree/v1/access.proto). Everything the gateway
// enforces per route — the role a key needs, whether Idempotency-Key is
// honoured and how — is derived from these, so a new RPC needs its
// declaration and nothing else here.
type Route struct {
	// RPC is the gRPC full method, "/agentree.v1.AgentService/Name".
	RPC string
	// Method and Template are the HTTP rule, e.g. POST
	// /api/orgs/{org}/agent-executions/{id}/signal.
	Method, Template string
	// Role is the role a key needs: entrystore.RoleAdmin, RoleRun,
	// RoleApprove or RoleRead.
	Role string
	// Idempotency is how the route honours Idempotency-Key: IDEMPOTENCY_
	// UNSPECIFIED (a read, the header is ignored), _RERUN or _REPLAY.
	Idempotency pb.Idempotency
	// SecretResponse: the response carries a secret shown once, so it is
	// stored for a replay without it.
	SecretResponse bool

	segs   []string // the template's segments; "" for a variable
	orgSeg int      // the index of {org} in segs
}

// Mutating reports whether the route changes anything (not a GET).
func (r Route) Mutating() bool { return r.Method != http.MethodGet }

// RPCName is the RPC's short name, "CreateAgentExecution".
func (r Route) RPCName() string { return r.RPC[strings.LastIndexByte(r.RPC, '/')+1:] }

// routeTable is the access declarations by gRPC method and the REST routes.
type routeTable struct {
	byRPC  map[string]Route // the first route of each RPC, for gRPC
	routes []Route
}

// Routes returns every REST route with its declaration, in the order of
// the HTTP rules.
func Routes() ([]Route, error) {
	t, err := loadRoutes()
	if err != nil {
		return nil, err
	}
	return append([]Route(nil), t.routes...), nil
}

// loadRoutes reads the table once: the declarations and the rules are
// compiled in, so it either always works or never does (a test checks).
var loadRoutes = sync.OnceValues(buildRoutes)

// httpRule is one rule of agentree_http.yaml.
type httpRule struct {
	Selector           string     `yaml:"selector"`
	Get                string     `yaml:"get"`
	Post               string     `yaml:"post"`
	Put                string     `yaml:"put"`
	Delete             string     `yaml:"delete"`
	Patch              string     `yaml:"patch"`
	AdditionalBindings []httpRule `yaml:"additional_bindings"`
}

// binding is the rule's method and path.
func (r httpRule) binding() (string, string) {
	for _, b := range []struct{ m, p string }{
		{http.MethodGet, r.Get}, {http.MethodPost, r.Post}, {http.MethodPut, r.Put},
		{http.MethodDelete, r.Delete}, {http.MethodPatch, r.Patch},
	} {
		if b.p != "" {
			return b.m, b.p
		}
	}
	return "", ""
}

func buildRoutes() (*routeTable, error) {
	var cfg struct {
		HTTP struct {
			Rules []httpRule `yaml:"rules"`
		} `yaml:"http"`
	}
	if err := yaml.Unmarshal(pb.HTTPRules, &cfg); err != nil {
		return nil, fmt.Errorf("gateway: routes: HTTP rules: %w", err)
	}
	svc := pb.File_agentree_v1_agentree_proto.Services().ByName("AgentService")
	decls := map[string]*pb.Access{}
	methods := svc.Methods()
	for i := range methods.Len() {
		m := methods.Get(i)
		opts, _ := m.Options().(*descriptorpb.MethodOptions)
		a, _ := proto.GetExtension(opts, pb.E_Access).(*pb.Access)
		if a == nil || a.GetRole() == pb.Role_ROLE_UNSPECIFIED {
			return nil, fmt.Errorf("gateway: routes: rpc %s declares no role (option (access))", m.Name())
		}
		decls[string(m.FullName())] = a
	}
	t := &routeTable{byRPC: map[string]Route{}}
	ruled := map[string]bool{}
	for _, rule := range cfg.HTTP.Rules {
		ruled[rule.Selector] = true
		a, ok := decls[rule.Selector]
		if !ok {
			return nil, fmt.Errorf("gateway: routes: HTTP rule for unknown rpc %s", rule.Selector)
		}
		name := rule.Selector[strings.LastIndexByte(rule.Selector, '.')+1:]
		for _, b := range append([]httpRule{rule}, rule.AdditionalBindings...) {
			rt, err := newRoute("/"+string(svc.FullName())+"/"+name, b, a)
			if err != nil {
				return nil, err
			}
			t.routes = append(t.routes, rt)
			if _, ok := t.byRPC[rt.RPC]; !ok {
				t.byRPC[rt.RPC] = rt
			}
		}
	}
	for full := range decls {
		if !ruled[full] {
			return nil, fmt.Errorf("gateway: routes: rpc %s has no HTTP rule", full)
		}
	}
	return t, nil
}

func newRoute(rpc string, b httpRule, a *pb.Access) (Route, error) {
	method, tmpl := b.binding()
	rt := Route{
		RPC: rpc, Method: method, Template: tmpl, Role: roleName(a.GetRole()),
		Idempotency: a.GetIdempotency(), SecretResponse: a.GetSecretResponse(), orgSeg: -1,
	}
	for i, seg := range strings.Split(strings.TrimPrefix(tmpl, "/"), "/") {
		if strings.HasPrefix(seg, "{") {
			if seg == "{org}" {
				rt.orgSeg = i
			}
			seg = ""
		}
		rt.segs = append(rt.segs, seg)
	}
	switch {
	case method == "":
		return rt, fmt.Errorf("gateway: routes: %s: a rule without a method", rpc)
	case rt.orgSeg < 0:
		return rt, fmt.Errorf("gateway: routes: %s %s names no {org}", method, tmpl)
	case rt.Mutating() && rt.Idempotency == pb.Idempotency_IDEMPOTENCY_UNSPECIFIED:
		return rt, fmt.Errorf("gateway: routes: %s %s changes state but declares no idempotency", method, tmpl)
	case !rt.Mutating() && rt.Idempotency != pb.Idempotency_IDEMPOTENCY_UNSPECIFIED:
		return rt, fmt.Errorf("gateway: routes: %s %s is a read but declares idempotency", method, tmpl)
	}
	return rt, nil
}

// roleName is a Role's name as keys carry it: ROLE_RUN is "run".
func roleName(r pb.Role) string {
	return strings.ToLower(strings.TrimPrefix(r.String(), "ROLE_"))
}

// match finds the route of a request, preferring literal segments to
// variables (…/checkpoints/latest over …/checkpoints/{sequence}).
func (t *routeTable) match(method, path string) (Route, []string, bool) {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	best, bestLit := -1, -1
	for i, rt := range t.routes {
		if rt.Method != method || len(rt.segs) != len(segs) {
			continue
		}
		lit, ok := 0, true
		for j, s := range rt.segs {
			switch {
			case s == "":
				ok = ok && segs[j] != ""
			case s == segs[j]:
				lit++
			default:
				ok = false
			}
		}
		if ok && lit > bestLit {
			best, bestLit = i, lit
		}
	}
	if best < 0 {
		return Route{}, nil, false
	}
	return t.routes[best], segs, true
}

// orgOf is the organization a matched path names.
func (r Route) orgOf(segs []string) string { return segs[r.orgSeg] }

// allowed reports whether key may call the route; else the error a caller
// sees names the role needed.
func (r Route) allowed(key entrystore.APIKey, what string) error {
	if key.Has(r.Role) {
		return nil
	}
	return &permissionDenied{role: r.Role, what: what}
}

// permissionDenied is a key without the role a route needs: 403 over
// HTTP, PERMISSION_DENIED over gRPC.
type permissionDenied struct{ role, what string }

func (e *permissionDenied) Error() string {
	return fmt.Sprintf("this API key does not have the %q role, which %s needs; use a key that has it", e.role, e.what)
}
