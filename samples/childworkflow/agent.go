package childworkflow

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// LookupCustomerTool is the triage agent's one tool.
const LookupCustomerTool = "lookup_customer"

// customers is the sample's customer database.
var customers = map[string]string{
	"acme":   "enterprise plan, 24/7 support contract",
	"globex": "free plan, community support",
}

// LookupCustomerArgs are lookup_customer's arguments.
type LookupCustomerArgs struct {
	Customer string `json:"customer"`
}

// RefineSchema implements agentsdk.SchemaRefiner.
func (LookupCustomerArgs) RefineSchema(s *jsonschema.Schema) {
	s.Properties["customer"].MinLength = jsonschema.Ptr(1)
}

// LookupCustomer returns the tool that tells the agent a customer's plan.
func LookupCustomer() *agentsdk.Tool {
	return agentsdk.NewTool(LookupCustomerTool, "Returns a customer's plan and support contract.",
		func(_ context.Context, _ agentsdk.ToolInvocation, a LookupCustomerArgs) (string, error) {
			plan, ok := customers[strings.ToLower(a.Customer)]
			if !ok {
				return "", fmt.Errorf("no customer %q", a.Customer)
			}
			return a.Customer + ": " + plan, nil
		})
}

// AgentConfig is the triage agent's configuration: the scripted model
// (replace it with a real one in production) and the lookup tool.
func AgentConfig() agentsdk.Config {
	return agentsdk.Config{
		SystemPrompt: "You triage support tickets. Look the customer up, then answer in exactly the format asked.",
		Models:       []agentsdk.ModelRef{scripted.Model("")},
		Tools:        []string{LookupCustomerTool},
		MaxTurns:     4,
	}
}

// TriagePrompt is what the agent is asked about a ticket.
func TriagePrompt(t Ticket) string {
	return fmt.Sprintf(`Triage ticket %s from customer %q. Look the customer up first, then answer with exactly two lines:
severity: high, normal or low
summary: one sentence

Subject: %s

%s`, t.ID, t.Customer, t.Subject, t.Body)
}

// customerRE reads the customer back out of a TriagePrompt.
var customerRE = regexp.MustCompile(`from customer "([^"]*)"`)

// urgentWords mark a ticket about something broken rather than a question.
var urgentWords = []string{"down", "outage", "data loss", "cannot log in", "500"}

// TriageScript is a scripted triage agent: it looks the customer up, then
// rates a ticket about something broken high for a customer with a support
// contract and normal otherwise, and anything else low.
func TriageScript() scripted.Script {
	return func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		prompt := req.Messages[0].Text()
		if turn == 0 {
			customer := ""
			if m := customerRE.FindStringSubmatch(prompt); m != nil {
				customer = m[1]
			}
			args, _ := json.Marshal(LookupCustomerArgs{Customer: customer})
			return scripted.Turn{Text: "Let me check who this customer is.", ToolCalls: []agentsdk.ToolCall{{ID: "lookup", Name: LookupCustomerTool, Arguments: args}}}
		}
		subject := ""
		if _, rest, ok := strings.Cut(prompt, "Subject: "); ok {
			subject, _, _ = strings.Cut(rest, "\n")
		}
		contract := strings.Contains(req.Messages[len(req.Messages)-1].Text(), "support contract")
		severity := SeverityLow
		for _, w := range urgentWords {
			if strings.Contains(strings.ToLower(prompt), w) {
				severity = SeverityNormal
				if contract {
					severity = SeverityHigh
				}
			}
		}
		return scripted.Turn{Text: fmt.Sprintf("severity: %s\nsummary: %s", severity, subject)}
	}
}
