package config

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
)

// SecretKeySize is the length of database.secret_key (MERGEGUARD_SECRET_KEY)
// in bytes: an AES-256 key.
const SecretKeySize = 32

// errSecretKey says what database.secret_key must be; it never quotes the
// value.
var errSecretKey = errors.New("must be 32 random bytes written as 64 hexadecimal digits or in base64, e.g. the output of `openssl rand -base64 32`")

// ParseSecretKey decodes database.secret_key: 64 hexadecimal digits, or
// base64 (standard or URL alphabet, padded or not) of 32 bytes. Surrounding
// white space is ignored. The error never contains the key.
func ParseSecretKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 2*SecretKeySize {
		if b, err := hex.DecodeString(s); err == nil {
			return b, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == SecretKeySize {
			return b, nil
		}
	}
	return nil, errSecretKey
}
