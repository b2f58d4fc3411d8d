package store_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mergeguard/mergeguard/server/store"
)

func testApp() store.AppCredentials {
	return store.AppCredentials{
		AppID: 42, Slug: "mergeguard-acme", HTMLURL: "https://github.com/apps/mergeguard-acme", ClientID: "Iv1.client",
		PrivateKey:    "-----BEGIN RSA PRIVATE KEY-----\nclear-pem-body\n-----END RSA PRIVATE KEY-----\n",
		WebhookSecret: "clear-webhook-secret",
		ClientSecret:  "clear-client-secret",
	}
}

func withKey(t *testing.T, s *store.Store, fill byte) {
	t.Helper()
	if err := s.SetSecretKey(bytes.Repeat([]byte{fill}, 32)); err != nil {
		t.Fatal(err)
	}
}

func TestAppCredentialsRoundTripSealed(t *testing.T) {
	t.Parallel()
	s, raw := newStore(t)
	withKey(t, s, 7)
	if _, ok, err := s.AppCredentials(t.Context()); ok || err != nil {
		t.Fatalf("AppCredentials before any = %v, %v; want none", ok, err)
	}
	if v, err := s.AppCredentialsVersion(t.Context()); v != 0 || err != nil {
		t.Fatalf("AppCredentialsVersion before any = %d, %v; want 0", v, err)
	}
	want := testApp()
	if err := s.SaveAppCredentials(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.AppCredentials(t.Context())
	if err != nil || !ok {
		t.Fatalf("AppCredentials = %v, %v", ok, err)
	}
	want.Version = 1
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(store.AppCredentials{}, "UpdatedAt")); diff != "" {
		t.Errorf("AppCredentials (-want +got):\n%s", diff)
	}

	// The row holds no secret in clear, nor the key.
	var row []byte
	if err := raw.QueryRow(t.Context(), `SELECT convert_to(t::text, 'UTF8') FROM github_app t`).Scan(&row); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"clear-pem-body", "PRIVATE KEY", "clear-webhook-secret", "clear-client-secret", "\\x0707070707070707"} {
		if bytes.Contains(row, []byte(secret)) {
			t.Errorf("the stored row contains %q in clear: %s", secret, row)
		}
	}

	// Saving again replaces the App and bumps the version.
	next := testApp()
	next.AppID, next.WebhookSecret = 43, "rotated"
	if err := s.SaveAppCredentials(t.Context(), next); err != nil {
		t.Fatal(err)
	}
	got, _, err = s.AppCredentials(t.Context())
	if err != nil || got.AppID != 43 || got.WebhookSecret.Value() != "rotated" || got.Version != 2 {
		t.Errorf("after a second save: %d %v version %d, %v", got.AppID, got.WebhookSecret.Value() == "rotated", got.Version, err)
	}
	if v, err := s.AppCredentialsVersion(t.Context()); v != 2 || err != nil {
		t.Errorf("AppCredentialsVersion = %d, %v; want 2", v, err)
	}
}

func TestAppCredentialsWrongOrNoKey(t *testing.T) {
	t.Parallel()
	s, raw := newStore(t)
	if err := s.SaveAppCredentials(t.Context(), testApp()); !errors.Is(err, store.ErrNoSecretKey) {
		t.Fatalf("SaveAppCredentials without a key = %v, want ErrNoSecretKey", err)
	}
	withKey(t, s, 7)
	if err := s.SaveAppCredentials(t.Context(), testApp()); err != nil {
		t.Fatal(err)
	}
	other, err := store.Open(t.Context(), raw.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	if _, _, err := other.AppCredentials(t.Context()); !errors.Is(err, store.ErrNoSecretKey) {
		t.Errorf("AppCredentials without a key = %v, want ErrNoSecretKey", err)
	}
	withKey(t, other, 8)
	_, ok, err := other.AppCredentials(t.Context())
	if !errors.Is(err, store.ErrWrongSecretKey) || ok {
		t.Errorf("AppCredentials with another key = %v, %v; want ErrWrongSecretKey", ok, err)
	}
	// A sealed value moved to another App id does not open either.
	if _, err := raw.Exec(t.Context(), `UPDATE github_app SET app_id = 99`); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AppCredentials(t.Context()); !errors.Is(err, store.ErrWrongSecretKey) {
		t.Errorf("AppCredentials of a changed row = %v, want ErrWrongSecretKey", err)
	}
}

func TestSaveAppCredentialsNotifies(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	withKey(t, s, 7)
	got := make(chan string, 4)
	go s.Listen(t.Context(), store.ChannelApp, func(string) { got <- "notified" })
	select {
	case <-got: // the (re)connect call
	case <-time.After(10 * time.Second):
		t.Fatal("Listen never connected")
	}
	if err := s.SaveAppCredentials(t.Context(), testApp()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("no notification on ChannelApp after SaveAppCredentials")
	}
}

func hash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

func TestTakeSetupState(t *testing.T) {
	t.Parallel()
	s, raw := newStore(t)
	ctx := t.Context()
	for _, st := range []string{"good", "foreign", "expired"} {
		if err := s.CreateSetupState(ctx, store.SetupState{StateHash: hash(st), BrowserHash: hash("browser"), WebURL: "https://ghe.example.com/"}, 10*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Exec(ctx, `UPDATE setup_states SET expires_at = now() - interval '1 second' WHERE state_hash = $1`, hash("expired")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name           string
		state, browser string
		want           error
	}{
		{"the starting browser", "good", "browser", nil},
		{"replayed", "good", "browser", store.ErrSetupStateUnknown},
		{"never issued", "forged", "browser", store.ErrSetupStateUnknown},
		{"another browser", "foreign", "attacker", store.ErrSetupStateForeign},
		{"its own browser after a foreign try", "foreign", "browser", nil},
		{"expired", "expired", "browser", store.ErrSetupStateExpired},
		{"expired, replayed", "expired", "browser", store.ErrSetupStateUnknown},
	}
	for _, tt := range tests {
		web, err := s.TakeSetupState(ctx, hash(tt.state), hash(tt.browser))
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: TakeSetupState = %v, want %v", tt.name, err, tt.want)
		}
		if wantWeb := map[bool]string{true: "https://ghe.example.com/"}[tt.want == nil]; web != wantWeb {
			t.Errorf("%s: TakeSetupState web URL = %q, want %q", tt.name, web, wantWeb)
		}
	}
}
