// Package apiclient is the Go client of Agentree's REST API and its
// Server-Sent Event streams: what the CLI, the bench, the chaos suite, the
// samples' starters and the tests use to talk to a gateway, and what a Go
// program that is not a Temporal worker should use too.
//
//	c, err := apiclient.New("http://127.0.0.1:8080", "acme", os.Getenv("AGENTREE_API_KEY"))
//	ex, err := c.CreateExecution(ctx, &agentreev1.CreateAgentExecutionRequest{UserPrompt: "Hello"})
//	for ev, err := range c.Follow(ctx, ex.GetId(), apiclient.FollowOptions{}) {
//		if err != nil { ... }
//		fmt.Println(ev.Name, string(ev.Data))
//	}
//
// Requests and answers are the generated API types (proto/agentree/v1),
// encoded as the gateway encodes them (protojson); fields a newer gateway
// adds are skipped. Every failure the gateway answers is an *Error with the
// API's code. Follow resumes a dropped stream with Last-Event-ID, so an
// event is seen once and in order across reconnections.
//
// It imports the generated API types and the standard library only.
package apiclient
