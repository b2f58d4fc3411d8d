#!/usr/bin/env bash
# with-postgres.sh [--durable] CMD [ARGS...]
#
# Runs CMD with MERGEGUARD_TEST_DATABASE_URL pointing at a PostgreSQL server.
# When the variable is already set, CMD simply runs against that server.
# Otherwise a throwaway cluster is created in a temporary directory (trust
# auth, UTF8, fsync off), started on a free port of 127.0.0.1, and stopped and
# removed when CMD ends. PostgreSQL is installed with apt-get when no server
# binaries are found (in PATH or /usr/lib/postgresql/*/bin). The script exits
# with CMD's status.
#
# The throwaway cluster lives in memory, in /dev/shm, when that is a tmpfs
# with at least 2 GiB free (scripts/memory-dir.sh; MERGEGUARD_PG_TMPDIR
# names another directory: set it to /tmp to keep the cluster on disk).
# The tests create and empty databases all the time: on the disk's file
# system (ext4 here) creating and removing their files took a quarter of
# PostgreSQL's CPU time (make test-short: 37 CPU-seconds of PostgreSQL on
# disk, 29 in memory).
#
# With --durable (or MERGEGUARD_PG_DURABLE=1) the cluster is always a new one
# and keeps PostgreSQL's default durability (fsync, synchronous_commit and
# full_page_writes on), as a production server would, for benchmarks whose
# figures must include the cost of a durable commit; its URL is in both
# MERGEGUARD_TEST_DATABASE_URL and MERGEGUARD_BENCH_DATABASE_URL (the
# side-by-side benchmark's intake runs on it: make bench).
#
#   bash scripts/with-postgres.sh go test -race ./server/store/...
#   bash scripts/with-postgres.sh --durable go test -bench Intake -run '^$' ./server/webhook/
set -euo pipefail

durable=""
if [ "${1:-}" = "--durable" ]; then
	durable=1
	shift
elif [ "${MERGEGUARD_PG_DURABLE:-}" = 1 ]; then
	durable=1 # the same as --durable
fi
if [ $# -eq 0 ]; then
	echo "usage: $0 [--durable] CMD [ARGS...]" >&2
	exit 2
fi
if [ -z "$durable" ] && [ -n "${MERGEGUARD_TEST_DATABASE_URL:-}" ]; then
	exec "$@"
fi

. "$(dirname "${BASH_SOURCE[0]}")/pg-common.sh"

pg_ensure_bindir
pg_prepare_owner

# parent is where the cluster's directory goes: memory for a throwaway
# cluster when there is room (see the top), else the temporary directory;
# the cluster owner must reach it, so as root stay out of a private TMPDIR.
parent=${MERGEGUARD_PG_TMPDIR:-}
if [ -z "$parent" ] && [ -z "$durable" ]; then
	parent=$(bash "$(dirname "${BASH_SOURCE[0]}")/memory-dir.sh")
fi
if [ -z "$parent" ]; then
	parent=/tmp
	if [ "$(id -u)" -ne 0 ]; then
		parent=${TMPDIR:-/tmp}
	fi
fi
tmp=$(mktemp -d "$parent/mergeguard-pg.XXXXXX")
if [ "$(id -u)" -eq 0 ]; then
	chown postgres: "$tmp"
fi

cleanup() {
	if [ -f "$tmp/data/postmaster.pid" ]; then
		pg_as_owner "$PG_BIN/pg_ctl" -D "$tmp/data" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

pg_initdb "$tmp/data"

durability=(-c fsync=off -c synchronous_commit=off -c full_page_writes=off)
if [ -n "$durable" ]; then
	durability=()
fi
started=""
# The first port tried is the same for every run from this directory, so
# that the URL, which the tests read, stays the same and go test's cache
# keeps the results of the packages a change did not touch; the others are
# random (another run of the same checkout holds the first).
stable=$((20000 + $(printf '%s' "$PWD" | cksum | cut -d' ' -f1) % 40000))
for try in $(seq 1 20); do
	port=$((20000 + RANDOM % 40000))
	if [ "$try" -eq 1 ]; then
		port=$stable
	fi
	if pg_port_in_use "$port"; then
		continue
	fi
	if pg_start "$tmp/data" "$port" "$tmp" "$tmp/postgres.log" \
		"${durability[@]}" -c max_connections=300; then
		started=1
		break
	fi
	# Lost a race for the port: try another one; anything else is fatal.
	if ! grep -q "could not bind\|could not create any TCP/IP sockets" "$tmp/postgres.log"; then
		break
	fi
done
if [ -z "$started" ]; then
	pg_log "could not start PostgreSQL; server log:"
	cat "$tmp/postgres.log" >&2 || true
	exit 1
fi

url="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
if [ -n "$durable" ]; then
	export MERGEGUARD_BENCH_DATABASE_URL="$url"
fi
export MERGEGUARD_TEST_DATABASE_URL="$url" # a durable cluster serves the tests' benchmarks too
status=0
"$@" || status=$?
exit "$status"
