package secretbox_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mergeguard/mergeguard/internal/secretbox"
)

func box(t *testing.T, fill byte) *secretbox.Box {
	t.Helper()
	b, err := secretbox.New(bytes.Repeat([]byte{fill}, secretbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	b := box(t, 1)
	plain := []byte("-----BEGIN RSA PRIVATE KEY-----\nMIIE...\n-----END RSA PRIVATE KEY-----\n")
	sealed, err := b.Seal(plain, []byte("row 1"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("PRIVATE KEY")) || bytes.Contains(sealed, plain) {
		t.Fatalf("the sealed value contains the plaintext: %q", sealed)
	}
	got, err := b.Open(sealed, []byte("row 1"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, plain) {
		t.Errorf("Open = %q, want %q", got, plain)
	}
	again, err := b.Seal(plain, []byte("row 1"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(again, sealed) {
		t.Error("two seals of the same value are equal: the nonce is not random")
	}
}

func TestOpenRefuses(t *testing.T) {
	b := box(t, 1)
	sealed, err := b.Seal([]byte("webhook secret"), []byte("row 1"))
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(sealed)
	flipped[len(flipped)-1] ^= 1
	tests := []struct {
		name   string
		box    *secretbox.Box
		sealed []byte
		ad     string
	}{
		{"wrong key", box(t, 2), sealed, "row 1"},
		{"other associated data", b, sealed, "row 2"},
		{"changed ciphertext", b, flipped, "row 1"},
		{"truncated", b, sealed[:10], "row 1"},
		{"empty", b, nil, "row 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.box.Open(tt.sealed, []byte(tt.ad))
			if !errors.Is(err, secretbox.ErrOpen) {
				t.Errorf("Open = %q, %v; want ErrOpen", got, err)
			}
		})
	}
}

func TestNewRefusesShortKeys(t *testing.T) {
	if _, err := secretbox.New(make([]byte, 16)); err == nil {
		t.Error("New accepted a 16-byte key")
	}
}
