package demo

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentree/agentree/agentsdk"
)

// The tools' names, as configurations and models call them.
const (
	SearchNotesTool = "search_notes"
	FetchNoteTool   = "fetch_note"
	WordCountTool   = "word_count"
)

// searchLimit is how many notes a search returns at most.
const searchLimit = 3

// Tools returns the research tools. Each call returns new values, so
// workers and tests never share a tool's compiled schema. EnvToolDelay
// slows them.
func Tools() []*agentsdk.Tool {
	return slowed([]*agentsdk.Tool{searchNotes(), fetchNote(), wordCount()}, toolDelay())
}

// SearchNotesArgs are search_notes' arguments.
type SearchNotesArgs struct {
	Query string `json:"query" jsonschema:"words to look for"`
}

// RefineSchema implements agentsdk.SchemaRefiner.
func (SearchNotesArgs) RefineSchema(s *jsonschema.Schema) {
	s.Properties["query"].MinLength = jsonschema.Ptr(1)
}

func searchNotes() *agentsdk.Tool {
	return agentsdk.NewTool(SearchNotesTool,
		"Searches the notes. Returns up to three matching notes, best first, one per line as `id — title`.",
		func(_ context.Context, _ agentsdk.ToolInvocation, a SearchNotesArgs) (string, error) {
			hits := search(a.Query, searchLimit)
			if len(hits) == 0 {
				return fmt.Sprintf("No note matches %q.", a.Query), nil
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%d notes match %q:\n", len(hits), a.Query)
			for _, h := range hits {
				fmt.Fprintf(&b, "%s — %s\n", h.ID, h.Title)
			}
			return b.String(), nil
		})
}

// FetchNoteArgs are fetch_note's arguments.
type FetchNoteArgs struct {
	ID string `json:"id"`
}

// RefineSchema implements agentsdk.SchemaRefiner.
func (FetchNoteArgs) RefineSchema(s *jsonschema.Schema) {
	s.Properties["id"].MinLength = jsonschema.Ptr(1)
}

func fetchNote() *agentsdk.Tool {
	return agentsdk.NewTool(FetchNoteTool,
		"Returns the whole text of one note, by the id search_notes gave.",
		func(_ context.Context, _ agentsdk.ToolInvocation, a FetchNoteArgs) (string, error) {
			n, err := findNote(a.ID)
			if err != nil {
				return "", err
			}
			return "# " + n.Title + "\n\n" + n.Body, nil
		})
}

// WordCountArgs are word_count's arguments.
type WordCountArgs struct {
	Text string `json:"text"`
}

func wordCount() *agentsdk.Tool {
	return agentsdk.NewTool(WordCountTool,
		"Counts the words of a text, to keep an answer within a length.",
		func(_ context.Context, _ agentsdk.ToolInvocation, a WordCountArgs) (string, error) {
			return fmt.Sprintf("%d words", len(strings.Fields(a.Text))), nil
		})
}
