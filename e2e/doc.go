// Package e2e holds MergeGuard's end-to-end tests: the real `mergeguard
// serve` binary against a real Postgres, a fake OpenAI-compatible model, and
// a real headless Chromium that uses the web UI as a person would. It has
// no code of its own.
//
// The same binary runs as the GitHub App against the fake GitHub, on
// loopback only: TestTwoReplicas runs two replicas on one database;
// TestLoad (MERGEGUARD_LOAD=1, `make bench`) measures intake, review
// throughput, API calls, tokens and memory and writes -load-out
// (bench/load.json); TestSoak (MERGEGUARD_SOAK=1, `make soak`) keeps 200
// pull requests in flight through two replicas for
// MERGEGUARD_SOAK_DURATION (default 3m). Every request loop is bounded in
// count and time.
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
