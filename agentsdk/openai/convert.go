package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/internal/providerkit"
)

// params converts req to the Chat Completions request. MaxTokens is sent
// as max_completion_tokens to api.openai.com (its reasoning models refuse
// max_tokens) and as max_tokens to compatible servers, which may not know
// the newer name. ThinkingBudget sets reasoning_effort for reasoning
// models (o-series, gpt-5) and is ignored for the rest; those models take
// only the default temperature, so Temperature is not sent to them. A
// default budget (ModelRequest.ThinkingByDefault) is the same: ignored
// but for reasoning models.
func params(req agentsdk.ModelRequest, official bool) (openai.ChatCompletionNewParams, error) {
	if req.Model.ModelID == "" {
		return openai.ChatCompletionNewParams{}, fmt.Errorf("%w: no model ID", agentsdk.ErrInvalidInput)
	}
	msgs := messages(req.System, req.Messages)
	tools, err := toolParams(req.Tools)
	if err != nil {
		return openai.ChatCompletionNewParams{}, err
	}
	p := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(req.Model.ModelID),
		Messages:      msgs,
		Tools:         tools,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.MaxTokens > 0 && official {
		p.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
	} else if req.MaxTokens > 0 {
		p.MaxTokens = openai.Int(int64(req.MaxTokens))
	}
	reasoning := reasoningModel(req.Model.ModelID)
	if req.Temperature != nil && !reasoning {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if req.ThinkingBudget > 0 && reasoning {
		p.ReasoningEffort = reasoningEffort(req.ThinkingBudget)
	}
	return p, nil
}

func reasoningModel(id string) bool {
	for _, prefix := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(id, prefix) {
			return true
		}
	}
	return false
}

func reasoningEffort(budget int) shared.ReasoningEffort {
	switch {
	case budget <= 2048:
		return shared.ReasoningEffortLow
	case budget <= 16384:
		return shared.ReasoningEffortMedium
	}
	return shared.ReasoningEffortHigh
}

// messages converts the conversation: the system prompt first, then one
// message per agentsdk message — each tool result its own tool message.
// Thinking is dropped: the API takes none back.
func messages(system string, msgs []agentsdk.Message) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	if system != "" {
		out = append(out, openai.SystemMessage(system))
	}
	for _, m := range msgs {
		switch m.Role {
		case agentsdk.RoleSystem:
			if t := m.Text(); t != "" {
				out = append(out, openai.SystemMessage(t))
			}
		case agentsdk.RoleUser:
			if u, ok := userMessage(m.Content); ok {
				out = append(out, u)
			}
		case agentsdk.RoleToolResult:
			out = append(out, openai.ToolMessage(m.Text(), providerkit.ToolCallID(m.ToolCallID, maxIDLen)))
		case agentsdk.RoleAssistant:
			if a, ok := assistantMessage(m); ok {
				out = append(out, a)
			}
		}
	}
	return out
}

// userMessage is plain text when it is one text block, which every
// compatible server takes, and content parts otherwise.
func userMessage(content []agentsdk.Block) (openai.ChatCompletionMessageParamUnion, bool) {
	var parts []openai.ChatCompletionContentPartUnionParam
	for _, b := range content {
		switch {
		case b.Type == agentsdk.BlockText && b.Text != "":
			parts = append(parts, openai.TextContentPart(b.Text))
		case b.Type == agentsdk.BlockImage && b.Image != nil:
			parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: imageURL(b.Image)}))
		}
	}
	switch {
	case len(parts) == 0:
		return openai.ChatCompletionMessageParamUnion{}, false
	case len(parts) == 1 && parts[0].OfText != nil:
		return openai.UserMessage(parts[0].OfText.Text), true
	}
	return openai.UserMessage(parts), true
}

// imageURL is the image's URL, or its data as a data: URL.
func imageURL(img *agentsdk.Image) string {
	if len(img.Data) == 0 {
		return img.URL
	}
	mt, data := providerkit.InlineImage(img)
	return "data:" + mt + ";base64," + data
}

func assistantMessage(m agentsdk.Message) (openai.ChatCompletionMessageParamUnion, bool) {
	var a openai.ChatCompletionAssistantMessageParam
	if t := m.Text(); t != "" {
		a.Content.OfString = openai.String(t)
	}
	for _, tc := range m.ToolCalls() {
		args := string(tc.Arguments)
		if args == "" {
			args = "{}"
		}
		a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID:       providerkit.ToolCallID(tc.ID, maxIDLen),
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
			},
		})
	}
	if !a.Content.OfString.Valid() && len(a.ToolCalls) == 0 {
		return openai.ChatCompletionMessageParamUnion{}, false
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, true
}

func toolParams(specs []agentsdk.ToolSpec) ([]openai.ChatCompletionToolUnionParam, error) {
	out := make([]openai.ChatCompletionToolUnionParam, 0, len(specs))
	for _, s := range specs {
		schema := shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
		if len(s.Parameters) > 0 {
			schema = shared.FunctionParameters{}
			if err := json.Unmarshal(s.Parameters, &schema); err != nil {
				return nil, fmt.Errorf("%w: tool %s: parameters: %v", agentsdk.ErrInvalidInput, s.Name, err)
			}
		}
		fn := shared.FunctionDefinitionParam{Name: s.Name, Parameters: schema}
		if s.Description != "" {
			fn.Description = openai.String(s.Description)
		}
		out = append(out, openai.ChatCompletionFunctionTool(fn))
	}
	return out, nil
}

// maxIDLen is the longest tool-call ID the API takes back.
const maxIDLen = 40
