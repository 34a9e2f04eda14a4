package agentsdk

import (
	"errors"
	"fmt"
	"math"
)

// ErrBudgetSpent marks a model call refused before it was made because a
// budget over it is spent: the organization's daily token or cost quota,
// the execution's (or an ancestor's) Budget, or its definition's total. An
// agent returns it from RunSegment as it got it (the built-in agents do):
// the runtime then ends the execution PAUSED with StopBudget, its
// conversation kept, and a resume continues it once the budget allows
// (a quota reset or raised, a cap raised on the resume).
var ErrBudgetSpent = errors.New("the budget is spent")

// StopBudget is the stop reason of an execution paused by ErrBudgetSpent.
const StopBudget = "budget"

// BudgetError is ErrBudgetSpent saying which budget and when it resets, in
// the API's terms: the paused execution's error text.
type BudgetError struct{ Reason string }

func (e *BudgetError) Error() string { return e.Reason }

// Is makes a BudgetError an ErrBudgetSpent.
func (e *BudgetError) Is(target error) bool { return target == ErrBudgetSpent }

// BudgetReason is the reason of the BudgetError in err's chain, or
// ErrBudgetSpent's text when it carries none.
func BudgetReason(err error) string {
	if be, ok := errors.AsType[*BudgetError](err); ok {
		return be.Reason
	}
	return ErrBudgetSpent.Error()
}

// Budget caps what an execution's model calls spend, its children's
// included (they roll up into their parent, and a parent's cap bounds
// them). Tokens are input + output, as the organization's daily quota
// counts them; cost is in USD, as usage prices it. A zero field is no
// limit.
type Budget struct {
	// MaxTokens and MaxCostUsd cap the execution's spend: once either is
	// reached its next model call is refused and it ends PAUSED with stop
	// reason "budget"; a resume may raise them.
	MaxTokens  int64   `json:"maxTokens,omitempty"`
	MaxCostUsd float64 `json:"maxCostUsd,omitempty"`
	// DowngradeAt is the share of a cap, more than 0 and at most 1, from
	// which model calls go to DowngradeModel; 0 = never downgrade.
	DowngradeAt float64 `json:"downgradeAt,omitempty"`
	// DowngradeModel is the cheaper model; nil = the last of the
	// configuration's models (its last fallback).
	DowngradeModel *ModelRef `json:"downgradeModel,omitempty"`
	// TotalMaxTokens and TotalMaxCostUsd, on a definition, cap all its
	// executions together (read from the definition at every call, so a
	// raise applies to running executions too).
	TotalMaxTokens  int64   `json:"totalMaxTokens,omitempty"`
	TotalMaxCostUsd float64 `json:"totalMaxCostUsd,omitempty"`
}

// DowngradedBudget is the reason recorded on a model call that a budget
// sent to a cheaper model (LLMCallMeta.Downgraded).
const DowngradedBudget = "budget"

// Problems lists what is wrong with b, naming its fields under field.
func (b *Budget) Problems(field string) []string {
	if b == nil {
		return nil
	}
	var problems []string
	if b.MaxTokens < 0 {
		problems = append(problems, fmt.Sprintf("%s.maxTokens must be 0 (no limit) or more; got %d", field, b.MaxTokens))
	}
	if b.TotalMaxTokens < 0 {
		problems = append(problems, fmt.Sprintf("%s.totalMaxTokens must be 0 (no limit) or more; got %d", field, b.TotalMaxTokens))
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"maxCostUsd", b.MaxCostUsd}, {"totalMaxCostUsd", b.TotalMaxCostUsd}} {
		if math.IsNaN(c.v) || math.IsInf(c.v, 0) || c.v < 0 {
			problems = append(problems, fmt.Sprintf("%s.%s must be a number of USD, 0 (no limit) or more; got %g", field, c.name, c.v))
		}
	}
	if d := b.DowngradeAt; math.IsNaN(d) || d < 0 || d > 1 {
		problems = append(problems, fmt.Sprintf("%s.downgradeAt must be a share of the cap, more than 0 and at most 1 (0 = never downgrade); got %g", field, d))
	}
	if m := b.DowngradeModel; m != nil && (m.Provider == "" || m.ModelID == "") {
		problems = append(problems, field+".downgradeModel needs provider and modelId")
	}
	return problems
}

// Downgrade is the model a call goes to when share of a cap is spent
// (the largest share of any budget over it): DowngradeTo once share
// reached DowngradeAt; ok is false when the call keeps its model.
func (b *Budget) Downgrade(models []ModelRef, share float64) (m ModelRef, ok bool) {
	if m, ok = b.DowngradeTo(models); !ok || share < b.DowngradeAt {
		return ModelRef{}, false
	}
	return m, true
}

// DowngradeTo is the model a call goes to once the budget's downgrade
// share is reached: DowngradeModel, else the last of models; ok is false
// when there is none to go to.
func (b *Budget) DowngradeTo(models []ModelRef) (m ModelRef, ok bool) {
	switch {
	case b == nil || b.DowngradeAt <= 0:
		return m, false
	case b.DowngradeModel != nil:
		return *b.DowngradeModel, true
	case len(models) > 0:
		return models[len(models)-1], true
	}
	return m, false
}
