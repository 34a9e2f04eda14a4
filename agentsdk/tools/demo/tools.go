package demo

import (
	"context"
	"fmt"
	"strings"

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
	Query string `json:"query"`
}

func searchNotes() *agentsdk.Tool {
	return agentsdk.FuncTool(SearchNotesTool,
		"Searches the notes. Returns up to three matching notes, best first, one per line as `id — title`.",
		`{"type":"object","properties":{"query":{"type":"string","minLength":1,"description":"words to look for"}},"required":["query"]}`,
		func(_ context.Context, a SearchNotesArgs) (string, error) {
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

func fetchNote() *agentsdk.Tool {
	return agentsdk.FuncTool(FetchNoteTool,
		"Returns the whole text of one note, by the id search_notes gave.",
		`{"type":"object","properties":{"id":{"type":"string","minLength":1}},"required":["id"]}`,
		func(_ context.Context, a FetchNoteArgs) (string, error) {
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
	return agentsdk.FuncTool(WordCountTool,
		"Counts the words of a text, to keep an answer within a length.",
		`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
		func(_ context.Context, a WordCountArgs) (string, error) {
			return fmt.Sprintf("%d words", len(strings.Fields(a.Text))), nil
		})
}
