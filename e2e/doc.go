// Package e2e holds MergeGuard's end-to-end tests: the real `mergeguard
// serve` binary against a real Postgres, a fake OpenAI-compatible model, and
// a real headless Chromium that uses the web UI as a person would. It has
// no code of its own.
//
// Chromium comes from scripts/ensure-chromium.sh (found through
// $CHROME_PATH, else /usr/bin/chromium); the database from
// scripts/with-postgres.sh:
//
//	CHROME_PATH=$(bash scripts/ensure-chromium.sh) bash scripts/with-postgres.sh go test ./e2e/
//
// MERGEGUARD_SKIP_BROWSER=1 skips the browser tests; without it, a missing
// Chromium fails them. `go test ./e2e/ -update` rewrites the screenshots in
// docs/.
package e2e
