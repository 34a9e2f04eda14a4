package agentsdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentree/agentree/agentsdk"
)

// ExampleNewTool builds a tool from a typed Go function: the JSON Schema
// the model sees is generated from the argument struct, and the runtime
// checks a call's arguments against it before the function runs.
func ExampleNewTool() {
	type shoutArgs struct {
		Text  string `json:"text" jsonschema:"what to shout"`
		Times int    `json:"times,omitempty" jsonschema:"how many times; default once"`
	}
	shout := agentsdk.NewTool("shout", "Shouts the text.",
		func(_ context.Context, _ agentsdk.ToolInvocation, a shoutArgs) (string, error) {
			return strings.Repeat(strings.ToUpper(a.Text)+"! ", max(a.Times, 1)), nil
		})
	if _, err := agentsdk.NewTools(shout); err != nil { // reports a schema that could not be built
		panic(err)
	}

	var schema any
	_ = json.Unmarshal(shout.Parameters, &schema)
	pretty, _ := json.MarshalIndent(schema, "", "  ")
	fmt.Println(string(pretty))

	fmt.Println(shout.Validate(json.RawMessage(`{"text":"hi","loud":true}`)) != nil)
	out, _ := shout.Run(context.Background(), agentsdk.ToolInvocation{Arguments: json.RawMessage(`{"text":"hi","times":2}`)})
	fmt.Println(out)
	// Output:
	// {
	//   "additionalProperties": false,
	//   "properties": {
	//     "text": {
	//       "description": "what to shout",
	//       "type": "string"
	//     },
	//     "times": {
	//       "description": "how many times; default once",
	//       "type": "integer"
	//     }
	//   },
	//   "required": [
	//     "text"
	//   ],
	//   "type": "object"
	// }
	// true
	// HI! HI!
}
