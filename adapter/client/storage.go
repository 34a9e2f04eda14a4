package client

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/protobuf/proto"

	"go.temporal.io/sdk/converter"

	"github.com/agentree/agentree/entrystore"
)

// SystemOrgID owns payloads the storage driver offloads: Temporal payloads
// belong to no one tenant's API surface.
const SystemOrgID = "00000000-0000-0000-0000-000000000000"

// StorageDriverName is the driver's name, stored with every claim it makes.
const StorageDriverName = "agentree-postgres"

// DefaultMaxPayloadSize is the largest payload the storage driver stores or
// returns unless told otherwise: far past what an agent turn produces, and
// small enough that one bad claim cannot make a worker read a gigabyte
// into memory.
const DefaultMaxPayloadSize = 64 << 20

// Errors the storage driver returns; match with errors.Is.
var (
	// ErrBadClaim: a claim that names no well-formed sha256, or whose
	// stored bytes do not hash to it.
	ErrBadClaim = errors.New("storage driver: bad claim")
	// ErrPayloadTooLarge: a payload past the driver's maximum size.
	ErrPayloadTooLarge = errors.New("storage driver: payload too large")
)

// StorageDriver is a Temporal external storage driver over the Postgres
// content store: a payload past the threshold is stored once by its sha256
// and history keeps only the claim. Like the SDK's S3 driver it trusts no
// claim it is handed: the digest must be well formed and the bytes read
// must hash to it, and payloads are capped in size both ways.
//
// NOTE: Experimental, as Temporal's external storage is.
type StorageDriver struct {
	es  *entrystore.Store
	max int64
}

var _ converter.StorageDriver = (*StorageDriver)(nil)

// NewStorageDriver returns the driver over es, capped at
// DefaultMaxPayloadSize.
func NewStorageDriver(es *entrystore.Store) *StorageDriver {
	return &StorageDriver{es: es, max: DefaultMaxPayloadSize}
}

// WithMaxPayloadSize returns d capped at n bytes per payload instead.
func (d *StorageDriver) WithMaxPayloadSize(n int64) *StorageDriver {
	return &StorageDriver{es: d.es, max: n}
}

// Name implements converter.StorageDriver; it is stored with every claim.
func (d *StorageDriver) Name() string { return StorageDriverName }

// Type implements converter.StorageDriver.
func (d *StorageDriver) Type() string { return StorageDriverName }

// Store implements converter.StorageDriver.
func (d *StorageDriver) Store(ctx converter.StorageDriverStoreContext, payloads []*commonpb.Payload) ([]converter.StorageDriverClaim, error) {
	claims := make([]converter.StorageDriverClaim, len(payloads))
	for i, p := range payloads {
		b, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("storage driver: encode payload: %w", err)
		}
		if int64(len(b)) > d.max {
			return nil, fmt.Errorf("%w: store: payload of %d bytes is over the maximum of %d bytes (adapter.Options.MaxPayloadSize)",
				ErrPayloadTooLarge, len(b), d.max)
		}
		var sha string
		err = ctx.GetLimiter().Permit(ctx.Context, p, func() error {
			var err error
			sha, _, err = d.es.PutContent(ctx.Context, SystemOrgID, b, "application/x-temporal-payload")
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("storage driver: store: %w", err)
		}
		claims[i] = converter.StorageDriverClaim{ClaimData: map[string]string{"sha256": sha}}
	}
	return claims, nil
}

// Retrieve implements converter.StorageDriver.
func (d *StorageDriver) Retrieve(ctx converter.StorageDriverRetrieveContext, claims []converter.StorageDriverClaim) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(claims))
	for i, c := range claims {
		sha, err := claimDigest(c)
		if err != nil {
			return nil, err
		}
		var b []byte
		err = ctx.GetLimiter().Permit(ctx.Context, c, func() error {
			// The size first, so an oversized row is refused unread.
			size, err := d.es.ContentSize(ctx.Context, SystemOrgID, sha)
			if err != nil {
				return err
			}
			if size > d.max {
				return fmt.Errorf("%w: payload %s of %d bytes is over the maximum of %d bytes (adapter.Options.MaxPayloadSize)",
					ErrPayloadTooLarge, sha, size, d.max)
			}
			b, _, err = d.es.GetContent(ctx.Context, SystemOrgID, sha)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("storage driver: retrieve %s: %w", sha, err)
		}
		if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != sha {
			return nil, fmt.Errorf("%w: the bytes stored under sha256 %s hash to %x", ErrBadClaim, sha, got)
		}
		p := &commonpb.Payload{}
		if err := proto.Unmarshal(b, p); err != nil {
			return nil, fmt.Errorf("storage driver: decode %s: %w", sha, err)
		}
		out[i] = p
	}
	return out, nil
}

// claimDigest returns the claim's sha256 if it is 64 lowercase hex digits,
// the only form Store writes.
func claimDigest(c converter.StorageDriverClaim) (string, error) {
	sha, ok := c.ClaimData["sha256"]
	if !ok || sha == "" {
		return "", fmt.Errorf("%w: no sha256 in the claim", ErrBadClaim)
	}
	if len(sha) != 2*sha256.Size {
		return "", fmt.Errorf("%w: sha256 %q is %d characters, not %d", ErrBadClaim, sha, len(sha), 2*sha256.Size)
	}
	for _, r := range sha {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return "", fmt.Errorf("%w: sha256 %q is not lowercase hex", ErrBadClaim, sha)
		}
	}
	return sha, nil
}
