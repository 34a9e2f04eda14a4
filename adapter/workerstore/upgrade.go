package workerstore

import (
	"database/sql"
	"fmt"
	"time"
)

// upgrades add what later versions read to a file an older worker wrote:
// each column once, then its backfill. SQLite has no ADD COLUMN IF NOT
// EXISTS, so the table's columns are looked up first.
var upgrades = []struct{ table, column, add, backfill string }{
	// step is seed 001's step number, as Postgres keeps it
	// (migrations/0004): the assistant messages on the path from the root
	// to the entry, the entry included.
	{"entry", "step", `ALTER TABLE entry ADD COLUMN step INTEGER NOT NULL DEFAULT 0`, `
		WITH RECURSIVE walk (id, step) AS (
			SELECT id, CASE WHEN type = 'message' AND role = 'assistant' THEN 1 ELSE 0 END FROM entry WHERE parent IS NULL
			UNION ALL
			SELECT c.id, walk.step + CASE WHEN c.type = 'message' AND c.role = 'assistant' THEN 1 ELSE 0 END
			FROM entry c JOIN walk ON c.parent = walk.id
		)
		UPDATE entry SET step = (SELECT step FROM walk WHERE walk.id = entry.id)`},
	{"checkpoint", "created_at", `ALTER TABLE checkpoint ADD COLUMN created_at TEXT NOT NULL DEFAULT ''`, ""},
	{"tool_call", "created_at", `ALTER TABLE tool_call ADD COLUMN created_at TEXT NOT NULL DEFAULT ''`, ""},
	{"tool_call", "updated_at", `ALTER TABLE tool_call ADD COLUMN updated_at TEXT NOT NULL DEFAULT ''`, ""},
}

func upgrade(db *sql.DB) error {
	for _, u := range upgrades {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, u.table, u.column).Scan(&n); err != nil {
			return fmt.Errorf("%s.%s: %w", u.table, u.column, err)
		}
		if n > 0 {
			continue
		}
		for _, stmt := range []string{u.add, u.backfill} {
			if stmt == "" {
				continue
			}
			if _, err := db.Exec(stmt); err != nil {
				return fmt.Errorf("%s.%s: %w", u.table, u.column, err)
			}
		}
	}
	return nil
}

// now is a row's time as the store writes it.
func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// parseTime reads a time the store wrote ("" on rows older than the
// column: the zero time).
func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}
