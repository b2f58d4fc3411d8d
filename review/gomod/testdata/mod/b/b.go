// Package b imports its module's a, the standard library and a third party.
package b

import (
	"strings"

	"example.com/mod/a"
	"example.com/mod/nested/x"
	party "github.com/third/party"
)

// Use uses them.
func Use(t a.T) string { return strings.Repeat(a.Logf("%d", t.N), 2) + party.Thing() + x.Name }
