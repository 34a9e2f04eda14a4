package entrystore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
)

// DefaultMediaType is what content is stored as when the caller names none.
const DefaultMediaType = "application/octet-stream"

// PutContent stores data under its sha256 in the organization and returns
// the hex digest. The same bytes are stored once: a repeat writes nothing
// and reports created=false (its media type is the first writer's).
func (s *Store) PutContent(ctx context.Context, orgID string, data []byte, mediaType string) (string, bool, error) {
	const op = "put content"
	ids, err := writeIDs(op, orgID)
	if err != nil {
		return "", false, err
	}
	if mediaType == "" {
		mediaType = DefaultMediaType
	}
	sum := sha256.Sum256(data)
	if data == nil {
		data = []byte{}
	}
	// A repeat touches the row (at most once a minute), so the pruner's
	// grace period counts from the last put: see Prune.
	var created bool
	err = s.pool.QueryRow(ctx, `
		INSERT INTO content AS c (org_id, sha256, size, media_type, data) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (org_id, sha256) DO UPDATE SET touched_at = now()
			WHERE c.touched_at < now() - interval '1 minute'
		RETURNING (xmax = 0)`, ids[0], sum[:], len(data), mediaType, data).Scan(&created)
	if err != nil && !errors.Is(err, errNoRows) {
		return "", false, wrap(op, err)
	}
	return hex.EncodeToString(sum[:]), created, nil
}

// GetContent returns the bytes and media type stored under sha.
func (s *Store) GetContent(ctx context.Context, orgID, sha string) ([]byte, string, error) {
	op := "get content " + sha
	ids, sum, err := contentKey(op, orgID, sha)
	if err != nil {
		return nil, "", err
	}
	var data []byte
	var mediaType string
	err = s.pool.QueryRow(ctx, `SELECT data, media_type FROM content WHERE org_id = $1 AND sha256 = $2`,
		ids[0], sum).Scan(&data, &mediaType)
	if err != nil {
		return nil, "", wrap(op, err)
	}
	return data, mediaType, nil
}

// ContentSize returns the stored size without reading the bytes, for
// listings and for deciding whether to stream.
func (s *Store) ContentSize(ctx context.Context, orgID, sha string) (int64, error) {
	op := "content size " + sha
	ids, sum, err := contentKey(op, orgID, sha)
	if err != nil {
		return 0, err
	}
	var size int64
	err = s.pool.QueryRow(ctx, `SELECT size FROM content WHERE org_id = $1 AND sha256 = $2`, ids[0], sum).Scan(&size)
	return size, wrap(op, err)
}

// contentKey validates a read of content: a malformed org or digest names
// nothing, so it is ErrNotFound.
func contentKey(op, orgID, sha string) ([]string, []byte, error) {
	ids, err := readIDs(op, orgID)
	if err != nil {
		return nil, nil, err
	}
	sum, err := hex.DecodeString(sha)
	if err != nil || len(sum) != sha256.Size {
		return nil, nil, wrap(op, ErrNotFound)
	}
	return ids, sum, nil
}
