package gateway

import (
	"encoding/json"

	"github.com/agentree/agentree/agentsdk"
)

// checkpointState is a stored checkpoint state as the API serves it: the
// agent's State with the fields seed 000 names beside it — usageByModel
// (the State's usage), totalUsage (its sum, with the seed's inputTokens
// and outputTokens) and turnIndex (its turn).
// They repeat the State, so the engine stores the State alone and they
// are derived here. A state stored with them (by earlier versions) is
// served as it is, and so is one the engine did not write (not an object
// with a turn).
func checkpointState(raw json.RawMessage) json.RawMessage {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return raw
	}
	if _, ok := fields["turn"]; !ok {
		return raw
	}
	_, hasByModel := fields["usageByModel"]
	stored, hasTotal := fields["totalUsage"]
	_, hasTurn := fields["turnIndex"]
	var st agentsdk.State
	if json.Unmarshal(raw, &st) != nil {
		return raw
	}
	byModel := st.Usage
	if byModel == nil {
		byModel = agentsdk.UsageTracker{}
	}
	add := func(name string, has bool, v any) {
		if !has {
			fields[name], _ = json.Marshal(v)
		}
	}
	add("usageByModel", hasByModel, byModel)
	add("turnIndex", hasTurn, st.Turn)
	total := byModel.Total()
	if hasTotal {
		_ = json.Unmarshal(stored, &total)
	}
	fields["totalUsage"], _ = json.Marshal(totalUsageOf(total))
	out, err := json.Marshal(fields)
	if err != nil {
		return raw
	}
	return out
}

// totalUsage is the seed's totalUsage: inputTokens and outputTokens, with
// input and output beside them under their earlier names (README,
// "Migration notes": kept for one release).
type totalUsage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	agentsdk.Usage
}

func totalUsageOf(u agentsdk.Usage) totalUsage {
	return totalUsage{InputTokens: u.Input, OutputTokens: u.Output, Usage: u}
}
