#!/usr/bin/env bash
# dev-postgres.sh [start|stop|status]
#
# Manages a persistent local PostgreSQL cluster for development under
# .mergeguard/pg in the repository (data survives restarts).
#
#   start   (default) create the cluster on first use, start it when it is
#           not running, make sure the "mergeguard" database exists, and print
#           its URL on stdout — the only thing printed on stdout:
#               export DATABASE_URL="$(scripts/dev-postgres.sh)"
#           It listens on 127.0.0.1:54329, or the next free port when that
#           one is taken by something else. Running it again is harmless.
#   stop    stop the cluster (the data stays).
#   status  print the URL and exit 0 when running, exit 1 otherwise.
#
# Delete .mergeguard/pg (after stop) to start over with an empty database.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/pg-common.sh"

cmd=${1:-start}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir="$root/.mergeguard/pg"
data="$dir/data"
db=mergeguard

running_port() {
	# postmaster.pid line 4 is the port of a running server.
	if [ -f "$data/postmaster.pid" ] && pg_as_owner "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1; then
		sed -n 4p "$data/postmaster.pid"
		return 0
	fi
	return 1
}

url() { echo "postgres://postgres@127.0.0.1:$1/$db?sslmode=disable"; }

case "$cmd" in
start | stop | status) ;;
*)
	echo "usage: $0 [start|stop|status]" >&2
	exit 2
	;;
esac

pg_ensure_bindir

case "$cmd" in
stop)
	if running_port >/dev/null; then
		pg_as_owner "$PG_BIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null
		pg_log "stopped"
	else
		pg_log "not running"
	fi
	exit 0
	;;
status)
	if port=$(running_port); then
		url "$port"
		exit 0
	fi
	pg_log "not running"
	exit 1
	;;
esac

pg_prepare_owner
if [ ! -f "$data/PG_VERSION" ]; then
	mkdir -p "$dir"
	if [ "$(id -u)" -eq 0 ]; then
		chown postgres: "$dir"
		if ! runuser -u postgres -- test -w "$dir"; then
			pg_log "the postgres user cannot reach $dir (check the permissions of its parent directories)"
			exit 1
		fi
	fi
	pg_log "creating cluster in $data"
	pg_initdb "$data"
fi

if ! port=$(running_port); then
	port=54329
	while pg_port_in_use "$port"; do
		port=$((port + 1))
		if [ "$port" -gt 54399 ]; then
			pg_log "no free port in 54329-54399"
			exit 1
		fi
	done
	if ! pg_start "$data" "$port" "$dir" "$dir/postgres.log" -c synchronous_commit=off; then
		pg_log "could not start PostgreSQL; see $dir/postgres.log"
		tail -n 20 "$dir/postgres.log" >&2 || true
		exit 1
	fi
	pg_log "started on 127.0.0.1:$port"
fi

psql=("$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1)
if [ -z "$(pg_as_owner "${psql[@]}" -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'")" ]; then
	pg_as_owner "${psql[@]}" -c "CREATE DATABASE $db" >/dev/null
	pg_log "created database $db"
fi
url "$port"
