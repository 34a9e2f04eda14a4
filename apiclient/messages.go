package apiclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
)

// messagesPage is how many messages Messages asks for at once: the API's
// largest page, so a long conversation takes few round trips.
const messagesPage = 500

// Messages is the execution's conversation as GET …/messages lists it,
// every page followed by its cursor: the messages of its active path, up
// to the entry it has reached.
func (c *Client) Messages(ctx context.Context, executionID string) ([]*agentreev1.Message, error) {
	var msgs []*agentreev1.Message
	path := "/agent-executions/" + url.PathEscape(executionID) + "/messages"
	for cursor := ""; ; {
		q := url.Values{"pageSize": {strconv.Itoa(messagesPage)}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		page := &agentreev1.ListMessagesResponse{}
		if err := c.Do(ctx, http.MethodGet, path+"?"+q.Encode(), nil, page); err != nil {
			return nil, err
		}
		msgs = append(msgs, page.GetMessages()...)
		if cursor = page.GetNextCursor(); cursor == "" {
			return msgs, nil
		}
	}
}
