package gateway

import (
	"encoding/json"

	"github.com/agentree/agentree/agentsdk"
)

// checkpointState is a stored checkpoint state as the API serves it: the
// agent's State with the fields seed 000 names beside it — usageByModel
// (the State's usage), totalUsage (its sum) and turnIndex (its turn).
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
	_, hasTotal := fields["totalUsage"]
	_, hasTurn := fields["turnIndex"]
	if hasByModel && hasTotal && hasTurn {
		return raw
	}
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
	add("totalUsage", hasTotal, byModel.Total())
	add("turnIndex", hasTurn, st.Turn)
	out, err := json.Marshal(fields)
	if err != nil {
		return raw
	}
	return out
}
