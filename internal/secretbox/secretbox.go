// Package secretbox encrypts small secrets for storage with AES-256-GCM:
// a random 96-bit nonce per message, and associated data that binds a
// sealed value to where it is stored, so that a value copied to another
// row or column does not open.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// KeySize is the key length in bytes (AES-256).
const KeySize = 32

// version is the first byte of every sealed value, so that the format can
// change later.
const version = 1

// ErrOpen says a sealed value does not open with the key: another key
// sealed it, or it was changed. It says nothing more, on purpose.
var ErrOpen = errors.New("secretbox: the value does not decrypt with this key (wrong key, or the value was changed)")

// Box seals and opens values with one key. It is safe for concurrent use.
type Box struct {
	aead cipher.AEAD
}

// New returns a Box for a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secretbox: the key has %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secretbox: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secretbox: %w", err)
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plaintext bound to ad: version byte, nonce, then the
// ciphertext with its tag.
func (b *Box) Seal(plaintext, ad []byte) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("secretbox: nonce: %w", err)
	}
	out := make([]byte, 0, 1+len(nonce)+len(plaintext)+b.aead.Overhead())
	out = append(append(out, version), nonce...)
	return b.aead.Seal(out, nonce, plaintext, ad), nil
}

// Open decrypts a value Seal made with the same key and ad; it returns
// ErrOpen for any other.
func (b *Box) Open(sealed, ad []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < 1+n+b.aead.Overhead() || sealed[0] != version {
		return nil, ErrOpen
	}
	pt, err := b.aead.Open(nil, sealed[1:1+n], sealed[1+n:], ad)
	if err != nil {
		return nil, ErrOpen
	}
	return pt, nil
}
