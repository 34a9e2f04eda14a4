package migrations

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/tern/v2/migrate"
)

//go:embed *.sql
var files embed.FS

// VersionTable is where tern records the applied version, in the
// connection's current schema.
const VersionTable = "agentree_schema_version"

// Apply brings the database behind conn up to the newest migration. It is
// safe to call concurrently and repeatedly: tern takes an advisory lock and
// skips what is already applied.
//
// A schema that a newer build migrated further than this build's newest
// migration is up to date for this build: migrations only add (README
// "Upgrades"), so an older worker keeps working on it. tern refuses such
// a schema ("current version is outside the valid versions"), which made a
// worker rolled back during a deploy, or an old one restarted before its
// replacement, exit at every start (make chaos -deploy from a build with
// fewer migrations found it).
func Apply(ctx context.Context, conn *pgx.Conn) error {
	m, err := migrate.NewMigrator(ctx, conn, VersionTable)
	if err != nil {
		return fmt.Errorf("migrations: new migrator: %w", err)
	}
	if err := m.LoadMigrations(files); err != nil {
		return fmt.Errorf("migrations: load: %w", err)
	}
	current, err := m.GetCurrentVersion(ctx)
	if err != nil {
		return fmt.Errorf("migrations: current version: %w", err)
	}
	if current > int32(len(m.Migrations)) {
		return nil
	}
	if err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("migrations: migrate: %w", err)
	}
	return nil
}

// ApplyTo brings the database behind conn up to migration version and no
// further (tests of a migration's backfill start from the version before
// it). It never goes down.
func ApplyTo(ctx context.Context, conn *pgx.Conn, version int32) error {
	m, err := migrate.NewMigrator(ctx, conn, VersionTable)
	if err != nil {
		return fmt.Errorf("migrations: new migrator: %w", err)
	}
	if err := m.LoadMigrations(files); err != nil {
		return fmt.Errorf("migrations: load: %w", err)
	}
	if err := m.MigrateTo(ctx, version); err != nil {
		return fmt.Errorf("migrations: migrate to %d: %w", version, err)
	}
	return nil
}

// ApplyURL opens one connection to databaseURL, applies the migrations and
// closes it.
func ApplyURL(ctx context.Context, databaseURL string) error {
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return fmt.Errorf("migrations: connect: %w", err)
	}
	defer conn.Close(context.Background())
	return Apply(ctx, conn)
}

// Version reports the highest applied migration.
func Version(ctx context.Context, conn *pgx.Conn) (int32, error) {
	m, err := migrate.NewMigrator(ctx, conn, VersionTable)
	if err != nil {
		return 0, fmt.Errorf("migrations: new migrator: %w", err)
	}
	return m.GetCurrentVersion(ctx)
}
