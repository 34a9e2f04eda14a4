package demo

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"unicode"
)

// notesFS is the corpus the tools search: one markdown file per note, its
// file name (without .md) the note's ID and its first line the title.
//
//go:embed notes/*.md
var notesFS embed.FS

// note is one note of the corpus.
type note struct {
	ID, Title, Body string
}

// corpus is every note, sorted by ID so searches tie-break the same way
// on every worker (a replayed or retried tool call sees the same result).
var corpus = mustLoadNotes()

func mustLoadNotes() []note {
	files, err := fs.Glob(notesFS, "notes/*.md")
	if err != nil {
		panic(err)
	}
	var out []note
	for _, f := range files {
		b, err := notesFS.ReadFile(f)
		if err != nil {
			panic(err)
		}
		title, body, _ := strings.Cut(string(b), "\n")
		out = append(out, note{
			ID:    strings.TrimSuffix(path.Base(f), ".md"),
			Title: strings.TrimSpace(strings.TrimPrefix(title, "#")),
			Body:  strings.TrimSpace(body),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func findNote(id string) (note, error) {
	for _, n := range corpus {
		if n.ID == id {
			return n, nil
		}
	}
	return note{}, fmt.Errorf("no note %q: search_notes lists the notes' IDs", id)
}

// hit is a note that matches a search, with its score.
type hit struct {
	note
	Score int
}

// search scores each note by how often the query's terms occur in it, a
// title match counting three times, and returns the best first.
func search(query string, limit int) []hit {
	terms := words(query)
	var hits []hit
	for _, n := range corpus {
		title, body := counts(n.Title), counts(n.Body)
		score := 0
		for _, t := range terms {
			score += 3*title[t] + body[t]
		}
		if score > 0 {
			hits = append(hits, hit{note: n, Score: score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	return hits[:min(limit, len(hits))]
}

func counts(text string) map[string]int {
	m := map[string]int{}
	for _, w := range words(text) {
		m[w]++
	}
	return m
}

// stopWords are too common to say what a note is about.
var stopWords = map[string]bool{
	"the": true, "and": true, "how": true, "does": true, "what": true, "why": true, "from": true,
	"with": true, "for": true, "its": true, "that": true, "this": true, "are": true, "into": true,
}

// words splits text into lower-case search terms: no stop words, nothing
// under three letters, a possessive or plural "s" dropped.
func words(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	}) {
		f = strings.TrimSuffix(strings.Trim(f, "'"), "'s")
		if len(f) > 4 {
			f = strings.TrimSuffix(f, "s")
		}
		if len(f) >= 3 && !stopWords[f] {
			out = append(out, f)
		}
	}
	return out
}
