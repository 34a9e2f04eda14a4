package entrystore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

func TestOrgsAndAPIKeys(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	_, err := f.store.CreateOrg(ctx, "acme", "again")
	require.ErrorIs(t, err, entrystore.ErrConflict)
	for _, bad := range []string{"", "_system", "Upper", "-lead", string(make([]byte, 70))} {
		_, err = f.store.CreateOrg(ctx, bad, "x")
		require.ErrorIs(t, err, entrystore.ErrInvalid, bad)
	}
	sys, err := f.store.EnsureOrg(ctx, "_system")
	require.NoError(t, err)
	require.Equal(t, entrystore.SystemOrgID, sys.ID)

	var wg sync.WaitGroup
	got := make([]entrystore.Org, 6)
	errs := make([]error, len(got))
	for i := range got {
		wg.Go(func() { got[i], errs[i] = f.store.EnsureOrg(ctx, "racy") })
	}
	wg.Wait()
	for i, o := range got {
		require.NoError(t, errs[i])
		require.Equal(t, got[0].ID, o.ID)
	}
	bySlug, err := f.store.GetOrgBySlug(ctx, "racy")
	require.NoError(t, err)
	byID, err := f.store.GetOrg(ctx, bySlug.ID)
	require.NoError(t, err)
	require.Equal(t, bySlug, byID)

	secret, key, err := f.store.CreateAPIKey(ctx, f.org.ID, "ci")
	require.NoError(t, err)
	require.Regexp(t, `^agt_[0-9a-f]{8}_[0-9a-f]{64}$`, secret)
	require.Equal(t, secret[4:12], key.Prefix)
	var stored int
	require.NoError(t, f.store.Pool().QueryRow(ctx,
		"SELECT count(*) FROM api_key WHERE position($1::bytea IN hash) > 0", []byte(secret)).Scan(&stored))
	require.Zero(t, stored, "the secret itself is never stored")

	org, k, err := f.store.AuthenticateAPIKey(ctx, secret)
	require.NoError(t, err)
	require.Equal(t, f.org, org)
	require.Equal(t, key.ID, k.ID)
	_, k, err = f.store.AuthenticateAPIKey(ctx, secret)
	require.NoError(t, err)
	require.NotNil(t, k.LastUsedAt)

	for _, bad := range []string{"", "agt_", secret + "x", "agt_00000000_" + secret[13:]} {
		_, _, err = f.store.AuthenticateAPIKey(ctx, bad)
		require.ErrorIs(t, err, entrystore.ErrNotFound)
	}
	require.Equal(t, entrystore.AllRoles, k.Roles, "a key minted without roles named carries all of them")
	revoked, err := f.store.RevokeAPIKey(ctx, f.org.ID, key.ID)
	require.NoError(t, err)
	require.NotNil(t, revoked.RevokedAt)
	_, _, err = f.store.AuthenticateAPIKey(ctx, secret)
	require.ErrorIs(t, err, entrystore.ErrNotFound)
}

// TestAPIKeyRolesAndExpiry: a key keeps the roles it was minted with, an
// expired one no longer authenticates, expiring never extends a key's life,
// and the list shows every key with its state.
func TestAPIKeyRolesAndExpiry(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	_, _, err := f.store.MintAPIKey(ctx, f.org.ID, entrystore.NewAPIKey{Roles: []string{"read", "root"}})
	require.ErrorIs(t, err, entrystore.ErrInvalid)
	past := time.Now().Add(-time.Minute)
	_, _, err = f.store.MintAPIKey(ctx, f.org.ID, entrystore.NewAPIKey{ExpiresAt: &past})
	require.ErrorIs(t, err, entrystore.ErrInvalid)

	later := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	secret, key, err := f.store.MintAPIKey(ctx, f.org.ID, entrystore.NewAPIKey{
		Name: "ci", Roles: []string{"read", "run", "read"}, ExpiresAt: &later})
	require.NoError(t, err)
	require.Equal(t, []string{"run", "read"}, key.Roles, "roles in their canonical order, once each")
	_, k, err := f.store.AuthenticateAPIKey(ctx, secret)
	require.NoError(t, err)
	require.True(t, k.Has("run"))
	require.False(t, k.Has("admin"))
	require.Equal(t, later, *k.ExpiresAt)

	much := time.Now().Add(48 * time.Hour)
	k, err = f.store.ExpireAPIKey(ctx, f.org.ID, key.ID, much)
	require.NoError(t, err)
	require.Equal(t, later, *k.ExpiresAt, "expire brings an expiry forward, never back")
	k, err = f.store.ExpireAPIKey(ctx, f.org.ID, key.ID, time.Time{})
	require.NoError(t, err)
	require.True(t, k.Expired(time.Now()))
	_, _, err = f.store.AuthenticateAPIKey(ctx, secret)
	require.ErrorIs(t, err, entrystore.ErrNotFound)

	_, err = f.store.ExpireAPIKey(ctx, f.org.ID, uuid.NewString(), time.Time{})
	require.ErrorIs(t, err, entrystore.ErrNotFound)
	keys, next, err := f.store.ListAPIKeys(ctx, f.org.ID, entrystore.Page{})
	require.NoError(t, err)
	require.Empty(t, next)
	require.Len(t, keys, 1)
	require.Equal(t, key.ID, keys[0].ID)
	require.NotNil(t, keys[0].ExpiresAt)
}
