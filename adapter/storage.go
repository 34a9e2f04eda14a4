package adapter

import (
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/agentree/agentree/adapter/client"
)

// The storage driver lives in the client package, since a client reads back
// the payloads workers offloaded (a large result); these names keep the
// plugin's surface whole.
type StorageDriver = client.StorageDriver

// NewStorageDriver returns the driver over es (see client.NewStorageDriver).
var NewStorageDriver = client.NewStorageDriver

// The driver's names and errors (see the client package).
const (
	SystemOrgID           = client.SystemOrgID
	StorageDriverName     = client.StorageDriverName
	DefaultMaxPayloadSize = client.DefaultMaxPayloadSize
)

// Errors the storage driver returns; match with errors.Is.
var (
	ErrBadClaim        = client.ErrBadClaim
	ErrPayloadTooLarge = client.ErrPayloadTooLarge
)

// addStorageDriver adds d to es next to the drivers the user configured,
// never replacing them. With none, d is the only driver and threshold
// applies. With the user's own, their selector keeps deciding where new
// payloads go and their threshold stands; without a selector (the SDK then
// uses their only driver) one that keeps choosing that driver is set,
// since the SDK requires a selector once there are two. d is appended so
// the claims it wrote stay readable. A driver of d's name already there (a
// client built by hand with it) is kept as is.
func addStorageDriver(es *converter.ExternalStorage, d *StorageDriver, threshold int) {
	for _, x := range es.Drivers {
		if x.Name() == d.Name() {
			return
		}
	}
	var next converter.StorageDriverSelector
	switch {
	case len(es.Drivers) == 0:
		es.PayloadSizeThreshold = threshold
		next = firstDriver{d}
	case es.DriverSelector == nil:
		next = firstDriver{es.Drivers[0]}
	default:
		next = es.DriverSelector
	}
	es.DriverSelector = readsInline{next}
	es.Drivers = append(es.Drivers, d)
}

// readsInline keeps the payloads of the held reader's workflow tasks —
// its query answers, a worker-held execution's conversation — inline: stored
// externally they would put the conversation worker-held persistence keeps off
// Postgres into its content store, for good. A query answer is never
// history, so its size costs no history budget. Every other payload goes
// where next selects.
type readsInline struct {
	next converter.StorageDriverSelector
}

func (r readsInline) SelectDriver(ctx converter.StorageDriverSelectContext, p *commonpb.Payload) (converter.StorageDriver, error) {
	if w, ok := ctx.Target.(converter.StorageDriverWorkflowInfo); ok && w.WorkflowType == HeldReaderWorkflow {
		return nil, nil
	}
	return r.next.SelectDriver(ctx, p)
}

// firstDriver selects the one driver a user configured, as the SDK does
// when there is only one.
type firstDriver struct{ d converter.StorageDriver }

func (f firstDriver) SelectDriver(converter.StorageDriverSelectContext, *commonpb.Payload) (converter.StorageDriver, error) {
	return f.d, nil
}
