package entrystore

import (
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentree/agentree/internal/domain"
)

// The sentinels every error wraps, so callers (the gateway's 404/409/400,
// activities' retry policy) branch on errors.Is and never on text.
var (
	ErrNotFound = errors.New("entrystore: not found")
	// ErrConflict is domain.ErrConflict: one value whichever store
	// answers.
	ErrConflict = domain.ErrConflict
	ErrInvalid  = errors.New("entrystore: invalid")
)

// wrap names the operation and maps Postgres failures onto the sentinels:
// no rows → ErrNotFound, unique violation → ErrConflict, bad reference,
// malformed value or failed check → ErrInvalid. Errors that already carry a
// sentinel keep it.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) || errors.Is(err, ErrInvalid) {
		return fmt.Errorf("entrystore: %s: %w", op, err)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("entrystore: %s: %w", op, ErrNotFound)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505": // unique_violation
			return fmt.Errorf("entrystore: %s: %w (%s)", op, ErrConflict, pgErr.ConstraintName)
		case "23503", "23502", "23514", // foreign key, not null, check
			"22P02", "22001", "22003", "22023", "22007", "22008", // bad text, too long, out of range, bad value, bad date
			"22021", "22P05", "2202E": // bad encoding, untranslatable, array subscript
			return fmt.Errorf("entrystore: %s: %w: %s", op, ErrInvalid, pgErr.Message)
		}
	}
	return fmt.Errorf("entrystore: %s: %w", op, err)
}

// errf builds a sentinel error with the operation and a reason.
func errf(op string, sentinel error, format string, args ...any) error {
	return fmt.Errorf("entrystore: %s: %w: %s", op, sentinel, fmt.Sprintf(format, args...))
}

// parseID canonicalises a UUID before it reaches SQL, so a malformed ID is
// answered here (ErrNotFound on reads, ErrInvalid on writes) rather than as
// a 22P02 from the server.
func parseID(id string) (string, bool) {
	u, err := uuid.Parse(id)
	if err != nil {
		return "", false
	}
	return u.String(), true
}

// optID validates an optional reference: "" means none.
func optID(id string) (string, bool) {
	if id == "" {
		return "", true
	}
	return parseID(id)
}

// readIDs validates IDs for a read; a malformed one can name no row.
func readIDs(op string, ids ...string) ([]string, error) {
	out := make([]string, len(ids))
	for i, id := range ids {
		v, ok := parseID(id)
		if !ok {
			return nil, fmt.Errorf("entrystore: %s %q: %w", op, id, ErrNotFound)
		}
		out[i] = v
	}
	return out, nil
}

// writeIDs validates IDs for a write; a malformed one is the caller's bug.
func writeIDs(op string, ids ...string) ([]string, error) {
	out := make([]string, len(ids))
	for i, id := range ids {
		v, ok := parseID(id)
		if !ok {
			return nil, errf(op, ErrInvalid, "malformed id %q", id)
		}
		out[i] = v
	}
	return out, nil
}
