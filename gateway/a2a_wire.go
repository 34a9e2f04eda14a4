package gateway

import (
	"encoding/json"
)

// The A2A wire (README "A2A"), protocol version 0.3.0: the version the
// official clients served here speak in common (a2a-go v0.3.3 only; the
// @a2a-js/sdk 1.x client with legacyCompat). Objects carry a "kind"
// discriminator and task states are the lowercase names below.

// a2aProtocolVersion is the card's protocolVersion.
const a2aProtocolVersion = "0.3.0"

// Task states.
const (
	a2aSubmitted     = "submitted"
	a2aWorking       = "working"
	a2aInputRequired = "input-required"
	a2aCompleted     = "completed"
	a2aCanceled      = "canceled"
	a2aFailed        = "failed"
	a2aUnknown       = "unknown"
)

// JSON-RPC and A2A error codes.
const (
	rpcParseError         = -32700
	rpcInvalidRequest     = -32600
	rpcMethodNotFound     = -32601
	rpcInvalidParams      = -32602
	rpcInternalError      = -32603
	a2aTaskNotFound       = -32001
	a2aTaskNotCancelable  = -32002
	a2aPushNotSupported   = -32003
	a2aUnsupportedOp      = -32004
	a2aContentTypeUnknown = -32005
)

// rpcRequest is a JSON-RPC 2.0 request.
type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// rpcResponse is a JSON-RPC 2.0 response: Result or Error.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error object; it is also the error the A2A
// methods return.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	// status is the HTTP status to answer with when not 200: a caller
	// without the key or the role is refused at the HTTP level, as the
	// REST API refuses it.
	status int
}

func (e *rpcError) Error() string { return e.Message }

// a2aPart is a message or artifact part: text, data or file.
type a2aPart struct {
	Kind string          `json:"kind"`
	Text string          `json:"text,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`
	File json.RawMessage `json:"file,omitempty"`
}

// a2aMessage is one message of a conversation.
type a2aMessage struct {
	Kind      string    `json:"kind"`
	MessageID string    `json:"messageId"`
	Role      string    `json:"role"`
	Parts     []a2aPart `json:"parts"`
	TaskID    string    `json:"taskId,omitempty"`
	ContextID string    `json:"contextId,omitempty"`
}

// a2aStatus is a task's status.
type a2aStatus struct {
	State     string      `json:"state"`
	Message   *a2aMessage `json:"message,omitempty"`
	Timestamp string      `json:"timestamp,omitempty"`
}

// a2aArtifact is an output of a task: here, the agent's answer.
type a2aArtifact struct {
	ArtifactID string    `json:"artifactId"`
	Name       string    `json:"name,omitempty"`
	Parts      []a2aPart `json:"parts"`
}

// a2aTask is a task: an execution.
type a2aTask struct {
	Kind      string         `json:"kind"`
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    a2aStatus      `json:"status"`
	Artifacts []a2aArtifact  `json:"artifacts,omitempty"`
	History   []a2aMessage   `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// a2aStatusUpdate and a2aArtifactUpdate are the streamed events.
type a2aStatusUpdate struct {
	Kind      string    `json:"kind"`
	TaskID    string    `json:"taskId"`
	ContextID string    `json:"contextId"`
	Status    a2aStatus `json:"status"`
	Final     bool      `json:"final"`
}

type a2aArtifactUpdate struct {
	Kind      string      `json:"kind"`
	TaskID    string      `json:"taskId"`
	ContextID string      `json:"contextId"`
	Artifact  a2aArtifact `json:"artifact"`
	Append    bool        `json:"append"`
	LastChunk bool        `json:"lastChunk"`
}

// a2aSendParams are message/send's and message/stream's params.
type a2aSendParams struct {
	Message       *a2aMessage `json:"message"`
	Configuration *struct {
		Blocking            *bool           `json:"blocking"`
		HistoryLength       *int            `json:"historyLength"`
		AcceptedOutputModes []string        `json:"acceptedOutputModes"`
		PushNotification    json.RawMessage `json:"pushNotificationConfig"`
	} `json:"configuration"`
	Metadata map[string]any `json:"metadata"`
}

// a2aTaskParams are tasks/get's, tasks/cancel's and tasks/resubscribe's.
type a2aTaskParams struct {
	ID            string         `json:"id"`
	HistoryLength *int           `json:"historyLength"`
	Metadata      map[string]any `json:"metadata"`
}
