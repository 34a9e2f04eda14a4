package gateway

import (
	"encoding/json"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
)

// topPersistenceMode folds a body's top-level persistenceMode (seed 000
// "Execution Modes" puts it there) into the config it shares a meaning
// with. conf is the body's own config object: the two may both be given
// only with the same value. It returns conf with the mode written in, so a
// definition stores the mode where an execution reads it from.
func topPersistenceMode(top string, conf json.RawMessage, cfg *agentsdk.Config) (json.RawMessage, error) {
	if top == "" {
		return conf, nil
	}
	if top != agentsdk.PersistenceRemote && top != agentsdk.PersistenceWorkerHeld {
		return nil, invalid("persistenceMode %q is not remote or local", top)
	}
	var body map[string]json.RawMessage
	if len(conf) > 0 {
		if err := json.Unmarshal(conf, &body); err != nil {
			return nil, invalid("config: %v", err)
		}
	}
	if body == nil {
		body = map[string]json.RawMessage{}
	}
	if given, ok := body["persistenceMode"]; ok {
		var mode string
		if json.Unmarshal(given, &mode) != nil || mode != top {
			return nil, invalid("persistenceMode %q and config.persistenceMode %s differ: give one, or the same in both", top, given)
		}
	}
	body["persistenceMode"], _ = json.Marshal(top) // a string cannot fail
	cfg.PersistenceMode = top
	out, err := json.Marshal(body)
	if err != nil {
		return nil, invalid("config: %v", err)
	}
	return out, nil
}

// persistenceMode is the mode a frozen config names: remote unless local.
func persistenceMode(conf json.RawMessage) string {
	var cfg struct {
		PersistenceMode string `json:"persistenceMode"`
	}
	if json.Unmarshal(conf, &cfg) == nil && cfg.PersistenceMode == agentsdk.PersistenceWorkerHeld {
		return entrystore.PersistenceWorkerHeld
	}
	return entrystore.PersistenceRemote
}
