#!/usr/bin/env bash
# ensure-chromium.sh
#
# Makes sure a Chromium for the browser tests (e2e/) is installed and prints
# its path on stdout. $CHROME_PATH wins when it names an executable;
# otherwise /usr/bin/chromium is used, installed first with apt-get (Debian's
# chromium package, plus fonts-liberation so screenshots render the same on
# every machine) when it is missing. Idempotent: a second run installs
# nothing. Messages go to stderr.
#
#   CHROME_PATH=$(bash scripts/ensure-chromium.sh)
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/apt.sh"

log() { echo "$(basename "$0"): $*" >&2; }

if [ -n "${CHROME_PATH:-}" ]; then
	if [ -x "$CHROME_PATH" ]; then
		echo "$CHROME_PATH"
		exit 0
	fi
	log "CHROME_PATH=$CHROME_PATH is not an executable"
	exit 1
fi

chromium=/usr/bin/chromium
if [ -x "$chromium" ]; then
	echo "$chromium"
	exit 0
fi

apt_install Chromium "install it (apt-get install chromium) or set CHROME_PATH" chromium fonts-liberation || exit 1
if [ ! -x "$chromium" ]; then
	log "apt-get installed chromium but $chromium is still missing"
	exit 1
fi
echo "$chromium"
