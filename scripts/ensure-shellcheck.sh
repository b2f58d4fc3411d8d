#!/usr/bin/env bash
# ensure-shellcheck.sh
#
# Makes sure shellcheck is installed (Debian's shellcheck package, with
# apt-get, when it is missing) and prints its path on stdout. MergeGuard's
# shell and workflow linters run it when it is on PATH; the tests of
# review/lint need it. Idempotent. Messages go to stderr.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/apt.sh"

if command -v shellcheck >/dev/null 2>&1; then
	command -v shellcheck
	exit 0
fi
apt_install shellcheck "install it (apt-get install shellcheck)" shellcheck || exit 1
command -v shellcheck
