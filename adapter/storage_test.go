package adapter_test

import (
	"context"
	"encoding/hex"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/internal/temporaltest"
)

// memDriver is a user's own external-storage driver, in memory.
type memDriver struct {
	mu     sync.Mutex
	blobs  map[string][]byte
	stored int
}

func (d *memDriver) Name() string { return "user-memory" }
func (d *memDriver) Type() string { return "memory" }

func (d *memDriver) Store(_ converter.StorageDriverStoreContext, ps []*commonpb.Payload) ([]converter.StorageDriverClaim, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	claims := make([]converter.StorageDriverClaim, len(ps))
	for i, p := range ps {
		b, err := proto.Marshal(p)
		if err != nil {
			return nil, err
		}
		k := uuid.NewString()
		d.blobs[k] = b
		d.stored++
		claims[i] = converter.StorageDriverClaim{ClaimData: map[string]string{"key": k}}
	}
	return claims, nil
}

func (d *memDriver) Retrieve(_ converter.StorageDriverRetrieveContext, cs []converter.StorageDriverClaim) ([]*commonpb.Payload, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]*commonpb.Payload, len(cs))
	for i, c := range cs {
		out[i] = &commonpb.Payload{}
		if err := proto.Unmarshal(d.blobs[c.ClaimData["key"]], out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (d *memDriver) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stored
}

func driverNames(ds []converter.StorageDriver) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Name())
	}
	return out
}

// TestStorageDriverKeepsOtherDrivers: a client configured with its own
// external-storage driver and the plugin keeps both, the user's still
// storing large payloads by the user's threshold, and a workflow's large
// input and result still round-trip through Temporal.
func TestStorageDriverKeepsOtherDrivers(t *testing.T) {
	h := newHarness(t, adapter.Options{}, true)
	plugin, err := adapter.NewPlugin(adapter.Options{Store: h.es, Agents: []agentsdk.Agent{react.New(react.Options{})}})
	require.NoError(t, err)

	// What the plugin makes of the options, with and without a user driver.
	mine := &memDriver{blobs: map[string][]byte{}}
	opts := client.Options{ExternalStorage: converter.ExternalStorage{Drivers: []converter.StorageDriver{mine}, PayloadSizeThreshold: 1 << 10}}
	require.NoError(t, plugin.ConfigureClient(context.Background(), client.PluginConfigureClientOptions{ClientOptions: &opts}))
	require.Equal(t, []string{"user-memory", adapter.StorageDriverName}, driverNames(opts.ExternalStorage.Drivers))
	require.Equal(t, 1<<10, opts.ExternalStorage.PayloadSizeThreshold, "the user's threshold stands")
	require.NotNil(t, opts.ExternalStorage.DriverSelector, "two drivers need a selector")
	picked, err := opts.ExternalStorage.DriverSelector.SelectDriver(converter.StorageDriverSelectContext{Context: context.Background()}, &commonpb.Payload{})
	require.NoError(t, err)
	require.Equal(t, "user-memory", picked.Name(), "the user's driver keeps storing")
	bare := client.Options{}
	require.NoError(t, plugin.ConfigureClient(context.Background(), client.PluginConfigureClientOptions{ClientOptions: &bare}))
	require.Equal(t, []string{adapter.StorageDriverName}, driverNames(bare.ExternalStorage.Drivers))
	require.Equal(t, 16<<10, bare.ExternalStorage.PayloadSizeThreshold)

	// And for real: a client and worker with both, and a large payload.
	tc, err := client.Dial(client.Options{
		HostPort: temporaltest.Address(t), Plugins: []client.Plugin{plugin}, Logger: temporaltest.Logger{},
		ExternalStorage: converter.ExternalStorage{Drivers: []converter.StorageDriver{mine}, PayloadSizeThreshold: 1 << 10},
	})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	queue := "storage-test-" + uuid.NewString()[:8]
	w := worker.New(tc, queue, worker.Options{})
	w.RegisterWorkflowWithOptions(func(_ workflow.Context, s string) (string, error) { return s + "!", nil },
		workflow.RegisterOptions{Name: "storage-echo"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	big := strings.Repeat("payload ", 1<<10) // 8 KiB, past the user's threshold
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "storage-" + uuid.NewString(), TaskQueue: queue}, "storage-echo", big)
	require.NoError(t, err)
	var got string
	require.NoError(t, run.Get(ctx, &got))
	require.Equal(t, big+"!", got)
	require.GreaterOrEqual(t, mine.count(), 2, "the user's driver stored the input and the result")
}

// TestStorageDriverChecksClaims: a claim without a well-formed sha256, or
// whose stored bytes do not hash to it, is refused with ErrBadClaim; a
// payload past the maximum size is refused both ways with
// ErrPayloadTooLarge.
func TestStorageDriverChecksClaims(t *testing.T) {
	h := newHarness(t, adapter.Options{}, true)
	ctx := context.Background()
	d := adapter.NewStorageDriver(h.es)
	sctx := converter.StorageDriverStoreContext{Context: ctx}
	rctx := converter.StorageDriverRetrieveContext{Context: ctx}
	payload := &commonpb.Payload{Data: []byte(strings.Repeat("x", 4096))}
	claims, err := d.Store(sctx, []*commonpb.Payload{payload})
	require.NoError(t, err)
	got, err := d.Retrieve(rctx, claims)
	require.NoError(t, err)
	require.True(t, proto.Equal(payload, got[0]), "an honest claim round-trips")
	sha := claims[0].ClaimData["sha256"]

	for name, data := range map[string]map[string]string{
		"no sha256":    {},
		"empty sha256": {"sha256": ""},
		"too short":    {"sha256": sha[:10]},
		"not hex":      {"sha256": strings.Repeat("z", 64)},
		"uppercase":    {"sha256": strings.ToUpper(sha)},
		"path":         {"sha256": "../" + sha[3:]},
	} {
		_, err := d.Retrieve(rctx, []converter.StorageDriverClaim{{ClaimData: data}})
		require.ErrorIs(t, err, adapter.ErrBadClaim, name)
	}

	// Bytes that do not hash to the claim: the row was changed behind the
	// store's back.
	raw, err := hex.DecodeString(sha)
	require.NoError(t, err)
	tag, err := h.es.Pool().Exec(ctx, `UPDATE content SET data = $1 WHERE org_id = $2 AND sha256 = $3`,
		[]byte("tampered"), adapter.SystemOrgID, raw)
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())
	_, err = d.Retrieve(rctx, claims)
	require.ErrorIs(t, err, adapter.ErrBadClaim)
	require.Contains(t, err.Error(), "hash to")

	// The size cap, on the way in and on the way out.
	small := d.WithMaxPayloadSize(1024)
	_, err = small.Store(sctx, []*commonpb.Payload{payload})
	require.ErrorIs(t, err, adapter.ErrPayloadTooLarge)
	require.Contains(t, err.Error(), "maximum of 1024 bytes")
	other := &commonpb.Payload{Data: []byte(strings.Repeat("y", 4096))}
	claims, err = d.Store(sctx, []*commonpb.Payload{other})
	require.NoError(t, err)
	_, err = small.Retrieve(rctx, claims)
	require.ErrorIs(t, err, adapter.ErrPayloadTooLarge)
}
