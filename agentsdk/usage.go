package agentsdk

// Usage is token use and cost for one or more model calls.
type Usage struct {
	Input      int64   `json:"input"`
	Output     int64   `json:"output"`
	CacheRead  int64   `json:"cacheRead,omitempty"`
	CacheWrite int64   `json:"cacheWrite,omitempty"`
	Cost       float64 `json:"cost,omitempty"` // USD
	// OutputCost is the part of Cost the output tokens cost (USD); the
	// rest is the input's, cache reads and writes included. Zero when the
	// call was not priced, or was recorded before it was kept.
	OutputCost float64 `json:"outputCost,omitempty"`
	Calls      int     `json:"calls,omitempty"`
	// Unpriced says some of the calls' models have no price (their
	// operator marked them unpriced): Cost counts nothing of those.
	Unpriced bool `json:"unpriced,omitempty"`
}

// Add returns u plus v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		Input:      u.Input + v.Input,
		Output:     u.Output + v.Output,
		CacheRead:  u.CacheRead + v.CacheRead,
		CacheWrite: u.CacheWrite + v.CacheWrite,
		Cost:       u.Cost + v.Cost,
		OutputCost: u.OutputCost + v.OutputCost,
		Calls:      u.Calls + v.Calls,
		Unpriced:   u.Unpriced || v.Unpriced,
	}
}

// Total is all tokens counted.
func (u Usage) Total() int64 { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

// Price is a model's price in USD per million tokens.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead,omitempty"`
	CacheWrite float64 `json:"cacheWrite,omitempty"`
}

// Cost prices u.
func (p Price) Cost(u Usage) float64 {
	return (float64(u.Input)*p.Input + float64(u.Output)*p.Output +
		float64(u.CacheRead)*p.CacheRead + float64(u.CacheWrite)*p.CacheWrite) / 1e6
}

// OutputCost prices u's output tokens alone.
func (p Price) OutputCost(u Usage) float64 { return float64(u.Output) * p.Output / 1e6 }

// UsageTracker sums usage by model, keyed "provider/modelId". It is plain
// data so it can live in State.
type UsageTracker map[string]Usage

// Add records one call's usage for model.
func (t UsageTracker) Add(model ModelRef, u Usage) {
	if u.Calls == 0 {
		u.Calls = 1
	}
	k := model.Key()
	t[k] = t[k].Add(u)
}

// Total sums every model's usage.
func (t UsageTracker) Total() Usage {
	var sum Usage
	for _, u := range t {
		sum = sum.Add(u)
	}
	return sum
}
