// Package migrations embeds MergeGuard's golang-migrate SQL files so the
// binary carries its own schema.
package migrations

import "embed"

// FS holds the NNNNNN_name.{up,down}.sql files.
//
//go:embed *.sql
var FS embed.FS
