package providerkit

import (
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/agentree/agentree/agentsdk"
)

// Prices is a provider's price table: its built-in list prices with the
// operator's overrides on top.
type Prices struct {
	table map[string]agentsdk.Price
	// dateSuffix matches the snapshot date of a dated model ID, which
	// each vendor writes its own way.
	dateSuffix *regexp.Regexp
}

// NewPrices merges overrides over builtin, which it does not change. A
// dated model ID is priced by its alias, the ID with dateSuffix's match
// removed. A negative price is an agentsdk.ErrInvalidInput error.
func NewPrices(builtin, overrides map[string]agentsdk.Price, dateSuffix *regexp.Regexp) (*Prices, error) {
	for id, p := range overrides {
		if p.Input < 0 || p.Output < 0 || p.CacheRead < 0 || p.CacheWrite < 0 {
			return nil, fmt.Errorf("%w: price of %s is negative", agentsdk.ErrInvalidInput, id)
		}
	}
	table := maps.Clone(builtin)
	if table == nil {
		table = map[string]agentsdk.Price{}
	}
	maps.Copy(table, overrides)
	return &Prices{table: table, dateSuffix: dateSuffix}, nil
}

// IDs are the model IDs the table prices, sorted.
func (p *Prices) IDs() []string { return slices.Sorted(maps.Keys(p.table)) }

// Lookup is ref's price: the table's for its exact ID, else for its
// alias. A model it knows no price for costs nothing.
func (p *Prices) Lookup(ref agentsdk.ModelRef) (agentsdk.Price, bool) {
	if pr, ok := p.table[ref.ModelID]; ok {
		return pr, true
	}
	pr, ok := p.table[p.dateSuffix.ReplaceAllString(ref.ModelID, "")]
	return pr, ok
}
