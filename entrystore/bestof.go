package entrystore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// BestOf is N forks of one execution run from one of its entries at once
// (migration 0029); one of them may be promoted.
type BestOf struct {
	ID          string
	OrgID       string
	ExecutionID string
	EntryID     string
	// BranchIDs are the forks, in order.
	BranchIDs []string
	// PromotedID is the fork kept ("" before a promotion), PromotedLeafID
	// the execution's entry its copied path ends at.
	PromotedID, PromotedLeafID string
	CreatedAt                  time.Time
}

// ErrPromoted: the best-of has another branch promoted already. It is an
// ErrConflict.
var ErrPromoted = fmt.Errorf("%w: another branch of this best-of is promoted already", ErrConflict)

const bestOfCols = `id::text, org_id::text, agent_execution_id::text, entry_id::text, branch_ids::text[],
	coalesce(promoted_id::text, ''), coalesce(promoted_leaf_id::text, ''), created_at`

func scanBestOf(row pgx.Row) (BestOf, error) {
	var b BestOf
	err := row.Scan(&b.ID, &b.OrgID, &b.ExecutionID, &b.EntryID, &b.BranchIDs, &b.PromotedID, &b.PromotedLeafID, &b.CreatedAt)
	b.CreatedAt = b.CreatedAt.UTC()
	return b, err
}

// CreateBestOf records a best-of whose forks are started already. A
// repeated id (a retried request) returns the stored row.
func (s *Store) CreateBestOf(ctx context.Context, b BestOf) (BestOf, error) {
	const op = "create best-of"
	ids, err := writeIDs(op, b.ID, b.OrgID, b.ExecutionID, b.EntryID)
	if err != nil {
		return BestOf{}, err
	}
	if _, err := writeIDs(op, b.BranchIDs...); err != nil {
		return BestOf{}, err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO agent_best_of (id, org_id, agent_execution_id, entry_id, branch_ids)
		VALUES ($1, $2, $3, $4, $5::uuid[]) ON CONFLICT (id) DO NOTHING`, ids[0], ids[1], ids[2], ids[3], b.BranchIDs)
	if err != nil {
		return BestOf{}, wrap(op, err)
	}
	return s.GetBestOf(ctx, b.OrgID, b.ExecutionID, b.ID)
}

// GetBestOf returns a best-of of the execution.
func (s *Store) GetBestOf(ctx context.Context, orgID, executionID, id string) (BestOf, error) {
	const op = "get best-of"
	ids, err := readIDs(op, orgID, executionID, id)
	if err != nil {
		return BestOf{}, err
	}
	b, err := scanBestOf(s.pool.QueryRow(ctx, `SELECT `+bestOfCols+` FROM agent_best_of
		WHERE org_id = $1 AND agent_execution_id = $2 AND id = $3`, ids[0], ids[1], ids[2]))
	return b, wrap(op, err)
}

// PromoteBestOf keeps the branch branchID: path (the branch's own entries,
// root first, each one's parent the one before it; the first's parent is
// replaced by under) is copied into the execution under the entry under,
// and the execution's leaf moves to the copy's end (moveLeaf: a WAITING
// execution's next message continues from there). All in one transaction
// holding the execution's row lock; the copies' idempotency keys name the
// best-of, so a repeat of the same promotion writes nothing new and
// returns the row as it was. Another branch promoted already is
// ErrPromoted.
func (s *Store) PromoteBestOf(ctx context.Context, orgID, executionID, id, branchID, under string, path []Entry) (BestOf, error) {
	const op = "promote best-of"
	var out BestOf
	err := s.variantTx(ctx, op, orgID, executionID, "", func(tx pgx.Tx, ex Execution, _ Variant) error {
		b, err := scanBestOf(tx.QueryRow(ctx, `SELECT `+bestOfCols+` FROM agent_best_of
			WHERE org_id = $1 AND agent_execution_id = $2 AND id = $3 FOR UPDATE`, ex.OrgID, ex.ID, id))
		if err != nil {
			return wrap(op, err)
		}
		switch b.PromotedID {
		case branchID:
			out = b
			return nil
		case "":
		default:
			return fmt.Errorf("entrystore: %s: %w (%s)", op, ErrPromoted, b.PromotedID)
		}
		if len(path) == 0 {
			return errf(op, ErrInvalid, "branch %s has no entries to promote", branchID)
		}
		parent := under
		for _, e := range path {
			c := Entry{OrgID: ex.OrgID, ExecutionID: ex.ID, ParentID: parent, Type: e.Type, Role: e.Role,
				Content: e.Content, TurnID: e.TurnID, Metadata: e.Metadata,
				IdempotencyKey: "bestof/" + b.ID + "/" + e.ID}
			stored, _, err := appendEntry(ctx, tx, c)
			if err != nil {
				return fmt.Errorf("entrystore: %s: copy entry %s: %w", op, e.ID, err)
			}
			parent = stored.ID
		}
		if err := moveLeaf(ctx, tx, ex, parent); err != nil {
			return fmt.Errorf("entrystore: %s: %w", op, err)
		}
		out, err = scanBestOf(tx.QueryRow(ctx, `UPDATE agent_best_of SET promoted_id = $2::uuid, promoted_leaf_id = $3::uuid
			WHERE id = $1 RETURNING `+bestOfCols, b.ID, branchID, parent))
		return wrap(op, err)
	})
	if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrConflict) && !errors.Is(err, ErrInvalid) {
		return out, wrap(op, err)
	}
	return out, err
}
