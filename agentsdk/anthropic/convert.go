package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/internal/providerkit"
)

// params converts req to the Messages API's request.
//
// Thinking is enabled with req.ThinkingBudget (a default one only on a
// ThinkingModel) unless the last assistant
// turn has tool_use without a leading thinking block — a turn another
// provider wrote — which the API rejects while thinking is on. With
// thinking on, Temperature is not sent (the API only takes the default)
// and max_tokens is raised above the budget when it is not already.
func (p *Provider) params(req agentsdk.ModelRequest) (anthropic.MessageNewParams, error) {
	if req.Model.ModelID == "" {
		return anthropic.MessageNewParams{}, fmt.Errorf("%w: no model ID", agentsdk.ErrInvalidInput)
	}
	system, msgs, err := p.messages(req.System, req.Messages)
	if err != nil {
		return anthropic.MessageNewParams{}, err
	}
	tools, err := toolParams(req.Tools)
	if err != nil {
		return anthropic.MessageNewParams{}, err
	}
	maxTokens := int64(req.MaxTokens)
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(req.Model.ModelID),
		MaxTokens: maxTokens,
		System:    system,
		Messages:  msgs,
		Tools:     tools,
	}
	budget := int64(req.ThinkingBudget)
	if req.ThinkingByDefault && !ThinkingModel(req.Model.ModelID) {
		budget = 0
	}
	if budget > 0 && thinkingAllowed(msgs) {
		params.Thinking = anthropic.ThinkingConfigParamOfEnabled(budget)
		if maxTokens <= budget {
			params.MaxTokens = budget + DefaultMaxTokens
		}
	} else if req.Temperature != nil {
		params.Temperature = anthropic.Float(*req.Temperature)
	}
	return params, nil
}

// messages converts the conversation. System messages join the system
// prompt. Consecutive messages of one role are merged, so every tool
// result answering one assistant turn — and any user text after them —
// lands in one user message, tool results first, as the API requires.
func (p *Provider) messages(system string, msgs []agentsdk.Message) ([]anthropic.TextBlockParam, []anthropic.MessageParam, error) {
	var sys []anthropic.TextBlockParam
	if system != "" {
		sys = append(sys, anthropic.TextBlockParam{Text: system})
	}
	var out []anthropic.MessageParam
	for i, m := range msgs {
		role := anthropic.MessageParamRoleUser
		var blocks []anthropic.ContentBlockParamUnion
		switch m.Role {
		case agentsdk.RoleSystem:
			if t := m.Text(); t != "" {
				sys = append(sys, anthropic.TextBlockParam{Text: t})
			}
			continue
		case agentsdk.RoleUser:
			blocks = userBlocks(m.Content)
		case agentsdk.RoleToolResult:
			blocks = []anthropic.ContentBlockParamUnion{toolResult(m)}
		case agentsdk.RoleAssistant:
			role = anthropic.MessageParamRoleAssistant
			blocks = p.assistantBlocks(m)
		default:
			return nil, nil, fmt.Errorf("%w: message %d: unknown role %q", agentsdk.ErrInvalidInput, i, m.Role)
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, anthropic.MessageParam{Role: role, Content: blocks})
	}
	for _, m := range out {
		slices.SortStableFunc(m.Content, func(a, b anthropic.ContentBlockParamUnion) int {
			return boolRank(b.OfToolResult != nil) - boolRank(a.OfToolResult != nil)
		})
	}
	return sys, out, nil
}

func userBlocks(content []agentsdk.Block) []anthropic.ContentBlockParamUnion {
	var out []anthropic.ContentBlockParamUnion
	for _, b := range content {
		switch {
		case b.Type == agentsdk.BlockText && b.Text != "":
			out = append(out, anthropic.NewTextBlock(b.Text))
		case b.Type == agentsdk.BlockImage && b.Image != nil:
			out = append(out, imageBlock(b.Image))
		}
	}
	return out
}

func imageBlock(img *agentsdk.Image) anthropic.ContentBlockParamUnion {
	if len(img.Data) == 0 {
		return anthropic.NewImageBlock(anthropic.URLImageSourceParam{URL: img.URL})
	}
	return anthropic.NewImageBlockBase64(providerkit.InlineImage(img))
}

func toolResult(m agentsdk.Message) anthropic.ContentBlockParamUnion {
	r := anthropic.ToolResultBlockParam{ToolUseID: toolCallID(m.ToolCallID)}
	for _, b := range userBlocks(m.Content) {
		switch {
		case b.OfText != nil:
			r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfText: b.OfText})
		case b.OfImage != nil:
			r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: b.OfImage})
		}
	}
	if m.IsError {
		r.IsError = anthropic.Bool(true)
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &r}
}

// assistantBlocks converts an answer. Thinking goes back only to the
// provider that signed it; another provider's thinking is dropped, since
// this API cannot verify it and the model should not read it as its own.
func (p *Provider) assistantBlocks(m agentsdk.Message) []anthropic.ContentBlockParamUnion {
	own := m.Provider == p.opts.Name
	var out []anthropic.ContentBlockParamUnion
	for _, b := range m.Content {
		switch {
		case b.Type == agentsdk.BlockText && b.Text != "":
			out = append(out, anthropic.NewTextBlock(b.Text))
		case b.Type == agentsdk.BlockThinking && own && b.Redacted != "":
			out = append(out, anthropic.NewRedactedThinkingBlock(b.Redacted))
		case b.Type == agentsdk.BlockThinking && own && b.Signature != "":
			out = append(out, anthropic.NewThinkingBlock(b.Signature, b.Thinking))
		case b.Type == agentsdk.BlockToolCall && b.ToolCall != nil:
			out = append(out, anthropic.NewToolUseBlock(toolCallID(b.ToolCall.ID), toolInput(b.ToolCall.Arguments), b.ToolCall.Name))
		}
	}
	return out
}

// toolInput is a call's arguments as the JSON object tool_use.input must
// be; arguments that are not one (cut short when written) become {}.
func toolInput(args json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed) {
		return trimmed
	}
	return json.RawMessage(`{}`)
}

// ThinkingModel reports whether the model takes extended thinking: Claude
// 3.7 Sonnet and every Claude of generation 4 on (claude-sonnet-4-5,
// claude-opus-4-1-…, claude-haiku-4-5, and the same names behind a
// platform's prefix). An ID it does not know answers false: a default
// budget sent to a model without thinking is a 400 for every call.
func ThinkingModel(id string) bool {
	i := strings.Index(id, "claude-")
	if i < 0 {
		return false
	}
	rest := id[i+len("claude-"):]
	if strings.HasPrefix(rest, "3-7-") {
		return true
	}
	for _, family := range []string{"opus-", "sonnet-", "haiku-"} {
		if v, ok := strings.CutPrefix(rest, family); ok {
			major, _, _ := strings.Cut(v, "-")
			n, err := strconv.Atoi(major)
			return err == nil && n >= 4 && n < 100
		}
	}
	return false
}

// thinkingAllowed reports whether the last assistant turn is one the API
// accepts with thinking on: no tool_use, or a thinking block first.
func thinkingAllowed(msgs []anthropic.MessageParam) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != anthropic.MessageParamRoleAssistant {
			continue
		}
		if !slices.ContainsFunc(m.Content, func(b anthropic.ContentBlockParamUnion) bool { return b.OfToolUse != nil }) {
			return true
		}
		first := m.Content[0]
		return first.OfThinking != nil || first.OfRedactedThinking != nil
	}
	return true
}

func toolParams(specs []agentsdk.ToolSpec) ([]anthropic.ToolUnionParam, error) {
	out := make([]anthropic.ToolUnionParam, 0, len(specs))
	for _, s := range specs {
		schema := map[string]any{}
		if len(s.Parameters) > 0 {
			if err := json.Unmarshal(s.Parameters, &schema); err != nil {
				return nil, fmt.Errorf("%w: tool %s: parameters: %v", agentsdk.ErrInvalidInput, s.Name, err)
			}
		}
		in := anthropic.ToolInputSchemaParam{Properties: schema["properties"]}
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if name, ok := r.(string); ok {
					in.Required = append(in.Required, name)
				}
			}
		}
		delete(schema, "properties")
		delete(schema, "required")
		delete(schema, "type")
		in.ExtraFields = schema
		t := anthropic.ToolParam{Name: s.Name, InputSchema: in}
		if s.Description != "" {
			t.Description = anthropic.String(s.Description)
		}
		out = append(out, anthropic.ToolUnionParam{OfTool: &t})
	}
	return out, nil
}

// toolCallID maps any provider's tool-call ID to one the API accepts
// (^[a-zA-Z0-9_-]+$, at most 64 long), alike in a tool_use and its
// tool_result.
func toolCallID(id string) string { return providerkit.ToolCallID(id, providerkit.OwnIDLen) }

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}
