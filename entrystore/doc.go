// Package entrystore is Agentree's Postgres side store: organizations and
// API keys, agent definitions, executions, the immutable conversation tree
// of entries, checkpoints, sha256-addressed content, tool-call records, the
// signals inbox, the stream-event replay window, the remote A2A tasks
// of remote sub-agents, the workspace snapshots recorded against
// checkpoints' leaf entries (their manifests and files are content) and
// the best-ofs (N forks from one entry, one promoted).
//
// It exists so Temporal workflows carry only references (an execution ID, a
// leaf entry ID, a few KiB of state) while everything that grows with a
// conversation lives here. Every method takes the organization and filters by
// it, so another organization's ID answers ErrNotFound. The one exception is
// worker capabilities (what each live worker serves): workers serve every
// organization, so those rows belong to none. Errors wrap one of
// ErrNotFound, ErrConflict or ErrInvalid; match them with errors.Is.
//
// The domain's types are defined once, in internal/domain, which the engine
// and the other stores share: Status (and its constants), Execution,
// Transition, Checkpoint, Entry, ErrConflict and ErrSignalConsumed are
// aliases of
// them here (entrystore.Status is domain.Status; entrystore.ErrConflict is
// the one conflict sentinel), so outside callers keep entrystore's names
// and nothing converts a row between packages.
//
// The Store holds one injected *pgxpool.Pool and never opens its own. It may
// import pgx, github.com/google/uuid, migrations and internal/domain only.
package entrystore
