package agentsdk

import "errors"

// ErrBudgetSpent marks a model call refused before it was made because the
// execution's organization has spent its daily token or cost quota. An
// agent returns it from RunSegment as it got it (the built-in agents do):
// the runtime then ends the execution PAUSED with StopBudget, its
// conversation kept, and a resume continues it once the quota allows.
var ErrBudgetSpent = errors.New("the organization's daily budget is spent")

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
