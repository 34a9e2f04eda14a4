package childworkflow

import (
	"context"
	"fmt"
	"io"
)

// The activities' names: Activities' method names, as RegisterActivity
// registers them.
const (
	PageOnCallActivityName  = "PageOnCall"
	QueueTicketActivityName = "QueueTicket"
)

// Activities act on a triage verdict. They stand in for an incident tool
// and a ticket queue and report what they do to Log.
type Activities struct {
	Log io.Writer
}

// PageInput is PageOnCall's input.
type PageInput struct {
	TicketID, Summary string
}

// PageOutput is PageOnCall's result.
type PageOutput struct {
	IncidentID string
}

// PageOnCall pages the on-call engineer about a ticket.
func (a *Activities) PageOnCall(_ context.Context, in PageInput) (PageOutput, error) {
	id := "INC-" + in.TicketID
	fmt.Fprintf(a.Log, "paging on-call: %s (%s)\n", in.Summary, id)
	return PageOutput{IncidentID: id}, nil
}

// QueueInput is QueueTicket's input.
type QueueInput struct {
	TicketID string
	Verdict  Verdict
}

// QueueOutput is QueueTicket's result.
type QueueOutput struct {
	Queue string
}

// QueueTicket files a ticket in the queue of its severity; a ticket the
// agent gave no clear severity goes to people.
func (a *Activities) QueueTicket(_ context.Context, in QueueInput) (QueueOutput, error) {
	queue := "support-" + string(in.Verdict.Severity)
	if in.Verdict.Severity == SeverityUnknown {
		queue = "human-review"
	}
	fmt.Fprintf(a.Log, "queued %s in %s: %s\n", in.TicketID, queue, in.Verdict.Summary)
	return QueueOutput{Queue: queue}, nil
}
