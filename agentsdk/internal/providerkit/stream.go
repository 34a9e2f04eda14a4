package providerkit

import (
	"context"

	"github.com/agentree/agentree/agentsdk"
)

// Stream is an SDK's stream of server-sent events; both SDKs'
// ssestream.Stream[E] are one.
type Stream[E any] interface {
	Next() bool
	Current() E
	Err() error
	Close() error
}

// Drain passes every event of s to add, then closes s. It returns the
// stream's error, else ctx's: an answer cut short by cancellation must not
// pass for a whole one.
func Drain[E any](ctx context.Context, s Stream[E], add func(E)) error {
	defer s.Close()
	for s.Next() {
		add(s.Current())
	}
	if err := s.Err(); err != nil {
		return err
	}
	return ctx.Err()
}

// Answer is the response for msg, an answer to a request for ref: msg is
// stamped with the provider and model that wrote it and its usage priced.
func Answer(provider string, ref agentsdk.ModelRef, prices *Prices, msg agentsdk.Message) agentsdk.ModelResponse {
	msg.Provider, msg.Model = provider, ref.ModelID
	if price, ok := prices.Lookup(ref); ok && msg.Usage != nil {
		msg.Usage.Cost, msg.Usage.OutputCost = price.Cost(*msg.Usage), price.OutputCost(*msg.Usage)
	} else if msg.Usage != nil {
		// Served only when the operator marked the model unpriced
		// (EndpointInfo.Priced): its usage says so, never $0.
		msg.Usage.Unpriced = true
	}
	return agentsdk.ModelResponse{Message: msg}
}
