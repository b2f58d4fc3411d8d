package config

import (
	"fmt"
	"io"
)

// redacted is what a set Secret prints as.
const redacted = "[REDACTED]"

// Secret is a string that never prints: fmt (every verb, including %#v),
// encoding/json, yaml.v3 and zerolog's Interface all see "[REDACTED]" when it
// is set and "" when it is empty, so a Config can be logged or dumped whole.
// Value returns the real text.
type Secret string

// Value returns the secret's text. Call it only where the secret is used,
// never to log it.
func (s Secret) Value() string { return string(s) }

// IsSet reports whether the secret is non-empty.
func (s Secret) IsSet() bool { return s != "" }

// String returns "[REDACTED]" for a set secret and "" for an empty one.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// Format writes String for every verb, so %v, %+v, %#v, %s, %q and %x of a
// Secret or of a struct holding one show no secret text.
func (s Secret) Format(f fmt.State, _ rune) {
	_, _ = io.WriteString(f, s.String())
}

// MarshalText returns String as bytes; encoding/json and yaml.v3 use it.
func (s Secret) MarshalText() ([]byte, error) {
	return []byte(s.String()), nil
}
