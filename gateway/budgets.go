package gateway

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// BudgetCeiling is the operator's ceiling on an execution's budget
// (config.budget's maxTokens and maxCostUsd): a create, a definition or a
// resume asking for more is refused with 400, and an execution that asks
// for no cap gets the ceiling as its cap, so no request, however hostile,
// spends past it. A zero field: no ceiling.
type BudgetCeiling struct {
	MaxTokens  int64
	MaxCostUsd float64
}

// apply checks b against the ceiling and returns it with the ceiling as
// the cap of each field that has none; nil b is no cap asked for. field
// is how the caller knows b ("config.budget").
func (c BudgetCeiling) apply(b *agentsdk.Budget, field string) (*agentsdk.Budget, error) {
	if c == (BudgetCeiling{}) {
		return b, nil
	}
	out := agentsdk.Budget{}
	if b != nil {
		out = *b
	}
	var problems []string
	if c.MaxTokens > 0 && out.MaxTokens > c.MaxTokens {
		problems = append(problems, field+".maxTokens is "+strconv.FormatInt(out.MaxTokens, 10)+", over the operator's ceiling of "+strconv.FormatInt(c.MaxTokens, 10))
	}
	if c.MaxCostUsd > 0 && out.MaxCostUsd > c.MaxCostUsd {
		problems = append(problems, field+".maxCostUsd is "+num(out.MaxCostUsd)+", over the operator's ceiling of "+num(c.MaxCostUsd)+" USD")
	}
	if len(problems) > 0 {
		return nil, invalid("%s", strings.Join(problems, "; "))
	}
	if out.MaxTokens == 0 {
		out.MaxTokens = c.MaxTokens
	}
	if out.MaxCostUsd == 0 {
		out.MaxCostUsd = c.MaxCostUsd
	}
	return &out, nil
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// resumeBudget is the paused execution's budget with the resume's set
// fields over it, checked as a create's is; nil req keeps cfg's. A resume
// of an execution paused at its budget must raise the cap it reached past
// what was spent, or it would pause again at its first call.
func (s *service) resumeBudget(ctx context.Context, ex entrystore.Execution, req *pb.BudgetConfig) (*agentsdk.Budget, error) {
	var cfg agentsdk.Config
	if err := json.Unmarshal(ex.Config, &cfg); err != nil {
		return nil, toStatus(s.log, "resume: config", err)
	}
	if req == nil {
		return cfg.Budget, nil
	}
	raw, err := protojson.Marshal(req)
	if err != nil {
		return nil, invalid("budget: %v", err)
	}
	if raw, err = int64sAsNumbers(raw, req.ProtoReflect().Descriptor()); err != nil {
		return nil, invalid("budget: %v", err)
	}
	b := agentsdk.Budget{}
	if cfg.Budget != nil {
		b = *cfg.Budget
	}
	if err := decodeStrict(raw, &b); err != nil {
		return nil, invalid("budget: %v", err)
	}
	if problems := b.Problems("budget"); len(problems) > 0 {
		return nil, invalid("%s", strings.Join(problems, "; "))
	}
	out, err := s.v.ceiling.apply(&b, "budget")
	if err != nil {
		return nil, err
	}
	if ex.StopReason == agentsdk.StopBudget {
		sp, err := s.es.ExecutionSpend(ctx, ex.OrgID, ex.ID)
		if err != nil {
			return nil, toStatus(s.log, "resume: spend", err)
		}
		line := entrystore.BudgetLine{Scope: entrystore.BudgetExecution, MaxTokens: out.MaxTokens, MaxCost: out.MaxCostUsd, Tokens: sp.Tokens, Cost: sp.Cost}
		if err := line.Reached(); err != nil {
			return nil, invalid("the new budget is spent already (%v): raise the cap it names", err)
		}
	}
	return out, nil
}

// budgetState is where the execution stands against its budgets; nil
// for an execution under none.
func (s *service) budgetState(ctx context.Context, ex entrystore.Execution) (*pb.BudgetState, error) {
	lines, err := s.es.Budgets(ctx, ex.OrgID, ex.ID, time.Now())
	if err != nil {
		return nil, toStatus(s.log, "budget state", err)
	}
	var cfg agentsdk.Config
	_ = json.Unmarshal(ex.Config, &cfg)
	if cfg.Budget == nil && len(lines) <= 1 {
		return nil, nil
	}
	out := &pb.BudgetState{}
	share, _ := entrystore.Judge(lines)
	for _, l := range lines {
		out.Limits = append(out.Limits, &pb.BudgetLimit{Scope: l.Scope, OwnerId: l.OwnerID, MaxTokens: l.MaxTokens, MaxCostUsd: l.MaxCost,
			SpentTokens: l.Tokens, SpentCostUsd: l.Cost, Reached: l.Reached() != nil})
		if l.Scope == entrystore.BudgetExecution {
			out.MaxTokens, out.MaxCostUsd, out.SpentTokens, out.SpentCostUsd = l.MaxTokens, l.MaxCost, l.Tokens, l.Cost
		}
	}
	if to, ok := cfg.Budget.DowngradeTo(cfg.Models); ok {
		_, out.Downgraded = cfg.Budget.Downgrade(cfg.Models, share)
		out.DowngradeAt = cfg.Budget.DowngradeAt
		out.DowngradeModel = toModelRefs([]agentsdk.ModelRef{to})[0]
	}
	return out, nil
}
