package main

import (
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/agentree/agentree/agentsdk"
)

// configSchema is the name protoc-gen-openapiv2 gives ExecutionConfig.
const configSchema = "v1ExecutionConfig"

// describeConfig states ExecutionConfig's ranges and choices in its
// schema, from agentsdk, which is where the worker and the gateway check
// them: a bound changed there changes the document at the next make
// generate, and the proto's comments need not restate numbers.
func describeConfig(doc *openapi3.T) error {
	ref := doc.Components.Schemas[configSchema]
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("no %s schema: has ExecutionConfig been renamed?", configSchema)
	}
	props := ref.Value.Properties
	prop := func(name string) (*openapi3.Schema, error) {
		p := props[name]
		if p == nil || p.Value == nil {
			return nil, fmt.Errorf("%s has no property %q that agentsdk.Config has", configSchema, name)
		}
		return p.Value, nil
	}
	for _, b := range agentsdk.ConfigBounds {
		p, err := prop(b.Field)
		if err != nil {
			return err
		}
		p.Min, p.Max = ptr(float64(b.Min)), ptr(float64(b.Max))
		p.Description = fmt.Sprintf("%s From %d to %d; %s.", p.Description, b.Min, b.Max, b.Zero)
	}
	temp, err := prop("temperature")
	if err != nil {
		return err
	}
	temp.Min, temp.Max = ptr(agentsdk.MinTemperature), ptr(agentsdk.MaxTemperature)
	for name, values := range map[string][]any{
		"mode":            {string(agentsdk.ModeOneShot), string(agentsdk.ModeMultiTurn)},
		"persistenceMode": {agentsdk.PersistenceRemote, agentsdk.PersistenceWorkerHeld},
	} {
		p, err := prop(name)
		if err != nil {
			return err
		}
		p.Enum = values
	}
	policy, err := prop("toolPolicy")
	if err != nil {
		return err
	}
	if policy.AdditionalProperties.Schema == nil || policy.AdditionalProperties.Schema.Value == nil {
		return fmt.Errorf("%s.toolPolicy is not a map", configSchema)
	}
	policy.AdditionalProperties.Schema.Value.Enum = []any{string(agentsdk.PolicyAuto), string(agentsdk.PolicyAsk), string(agentsdk.PolicyForbid)}
	return nil
}

func ptr[T any](v T) *T { return &v }
