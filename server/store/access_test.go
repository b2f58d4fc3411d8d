package store_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// openOn opens a store on the database at url (another replica).
func openOn(t *testing.T, url string) *store.Store {
	t.Helper()
	s, err := store.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestAccessSecretFirstWriterWins: two replicas generating a token agree
// on the first one stored; it is sealed with the key when there is one,
// kept in clear otherwise and sealed once a key is set; a wrong or missing
// key is said.
func TestAccessSecretFirstWriterWins(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	s, other := openOn(t, url), openOn(t, url)
	raw, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(raw.Close)
	ctx := t.Context()
	first, err := s.AccessSecret(ctx, store.SecretAPIToken, "first")
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.AccessSecret(ctx, store.SecretAPIToken, "second")
	if err != nil || first != "first" || second != "first" {
		t.Fatalf("AccessSecret = %q then %q (%v), want first twice", first, second, err)
	}
	stored := func() ([]byte, bool) {
		var v []byte
		var sealed bool
		if err := raw.QueryRow(ctx, `SELECT value, sealed FROM access_secrets WHERE name = 'api_token'`).Scan(&v, &sealed); err != nil {
			t.Fatal(err)
		}
		return v, sealed
	}
	if v, sealed := stored(); sealed || string(v) != "first" {
		t.Fatalf("without a key: stored %q sealed %v, want it in clear", v, sealed)
	}
	withKey(t, s, 7)
	if got, err := s.AccessSecret(ctx, store.SecretAPIToken, "third"); err != nil || got != "first" {
		t.Fatalf("with a key: %q, %v", got, err)
	}
	if v, sealed := stored(); !sealed || bytes.Contains(v, []byte("first")) {
		t.Fatalf("once a key is set: stored %q sealed %v, want it sealed", v, sealed)
	}
	if got, err := s.AccessSecret(ctx, store.SecretAPIToken, "x"); err != nil || got != "first" {
		t.Errorf("sealed, read again: %q, %v", got, err)
	}
	withKey(t, other, 8)
	if _, err := other.AccessSecret(ctx, store.SecretAPIToken, "x"); !errors.Is(err, store.ErrWrongSecretKey) {
		t.Errorf("another key: %v, want ErrWrongSecretKey", err)
	}
}

// TestWebSessions: a session is live until it expires, is ended, or
// everyone is signed out.
func TestWebSessions(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := t.Context()
	id := func(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }
	for _, k := range []string{"a", "b", "c"} {
		if err := s.AddWebSession(ctx, id(k), "token", time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddWebSession(ctx, id("old"), "github", time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	live := func() string {
		var out string
		for _, k := range []string{"a", "b", "c", "old"} {
			ok, err := s.WebSessionLive(ctx, id(k))
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				out += k
			}
		}
		return out
	}
	if got := live(); got != "abc" {
		t.Errorf("live %q, want abc (old expired)", got)
	}
	if err := s.EndWebSession(ctx, id("a")); err != nil {
		t.Fatal(err)
	}
	if got := live(); got != "bc" {
		t.Errorf("after ending a: live %q, want bc", got)
	}
	if n, err := s.EndAllWebSessions(ctx); err != nil || n != 2 {
		t.Errorf("EndAllWebSessions = %d, %v; want 2", n, err)
	}
	if got := live(); got != "" {
		t.Errorf("after ending all: live %q", got)
	}
}
