package adapter

import (
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/protobuf/proto"

	"go.temporal.io/sdk/converter"

	"github.com/agentree/agentree/entrystore"
)

// SystemOrgID owns payloads the storage driver offloads: Temporal payloads
// belong to no one tenant's API surface.
const SystemOrgID = "00000000-0000-0000-0000-000000000000"

// StorageDriver is a Temporal external storage driver over the Postgres
// content store: a payload past the threshold is stored once by its sha256
// and history keeps only the claim.
//
// NOTE: Experimental, as Temporal's external storage is.
type StorageDriver struct{ es *entrystore.Store }

var _ converter.StorageDriver = (*StorageDriver)(nil)

// NewStorageDriver returns the driver over es.
func NewStorageDriver(es *entrystore.Store) *StorageDriver { return &StorageDriver{es: es} }

// Name implements converter.StorageDriver; it is stored with every claim.
func (d *StorageDriver) Name() string { return "agentree-postgres" }

// Type implements converter.StorageDriver.
func (d *StorageDriver) Type() string { return "agentree-postgres" }

// Store implements converter.StorageDriver.
func (d *StorageDriver) Store(ctx converter.StorageDriverStoreContext, payloads []*commonpb.Payload) ([]converter.StorageDriverClaim, error) {
	claims := make([]converter.StorageDriverClaim, len(payloads))
	for i, p := range payloads {
		b, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("adapter: storage driver: encode payload: %w", err)
		}
		var sha string
		err = ctx.GetLimiter().Permit(ctx.Context, p, func() error {
			var err error
			sha, _, err = d.es.PutContent(ctx.Context, SystemOrgID, b, "application/x-temporal-payload")
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("adapter: storage driver: store: %w", err)
		}
		claims[i] = converter.StorageDriverClaim{ClaimData: map[string]string{"sha256": sha}}
	}
	return claims, nil
}

// Retrieve implements converter.StorageDriver.
func (d *StorageDriver) Retrieve(ctx converter.StorageDriverRetrieveContext, claims []converter.StorageDriverClaim) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(claims))
	for i, c := range claims {
		sha := c.ClaimData["sha256"]
		var b []byte
		err := ctx.GetLimiter().Permit(ctx.Context, c, func() error {
			var err error
			b, _, err = d.es.GetContent(ctx.Context, SystemOrgID, sha)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("adapter: storage driver: retrieve %s: %w", sha, err)
		}
		p := &commonpb.Payload{}
		if err := proto.Unmarshal(b, p); err != nil {
			return nil, fmt.Errorf("adapter: storage driver: decode %s: %w", sha, err)
		}
		out[i] = p
	}
	return out, nil
}
