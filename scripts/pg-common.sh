# Shared helpers for with-postgres.sh and dev-postgres.sh. Source it; do not
# run it. Messages go to stderr so the scripts' stdout stays clean.

. "$(dirname "${BASH_SOURCE[0]}")/apt.sh"

pg_log() { echo "$(basename "$0"): $*" >&2; }

# pg_find_bindir prints the directory holding initdb, pg_ctl and postgres:
# from PATH first, then the newest /usr/lib/postgresql/*/bin.
pg_find_bindir() {
	local initdb dir
	if initdb=$(command -v initdb 2>/dev/null); then
		dir=$(dirname "$(readlink -f "$initdb")")
		if [ -x "$dir/pg_ctl" ] && [ -x "$dir/postgres" ]; then
			echo "$dir"
			return 0
		fi
	fi
	for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
			echo "$dir"
			return 0
		fi
	done
	return 1
}

# pg_ensure_bindir sets PG_BIN, installing PostgreSQL with apt-get when no
# server binaries are found (Debian/Ubuntu, as root or through sudo).
pg_ensure_bindir() {
	if PG_BIN=$(pg_find_bindir); then
		return 0
	fi
	apt_install "PostgreSQL server binaries" "install postgresql (apt-get install postgresql) or set MERGEGUARD_TEST_DATABASE_URL" postgresql || return 1
	PG_BIN=$(pg_find_bindir) || {
		pg_log "postgresql installed but initdb still not found"
		return 1
	}
}

# pg_as_owner runs a command as the cluster owner: the postgres user when we
# are root (PostgreSQL refuses to run as root), else ourselves.
pg_as_owner() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# pg_prepare_owner makes sure the postgres user exists when we are root.
pg_prepare_owner() {
	if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
		useradd --system --user-group --no-create-home --home-dir /nonexistent postgres
	fi
}

# pg_port_in_use reports whether something listens on 127.0.0.1:$1.
pg_port_in_use() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# pg_initdb creates a cluster in $1 with trust auth, UTF8 and no fsync.
pg_initdb() {
	pg_as_owner "$PG_BIN/initdb" -D "$1" -U postgres -A trust -E UTF8 --no-locale --no-sync >/dev/null
}

# pg_start starts the cluster in data dir $1 on 127.0.0.1:$2 with its socket
# in $3 and its log in $4; extra server options follow.
pg_start() {
	local data=$1 port=$2 sock=$3 log=$4
	shift 4
	pg_as_owner "$PG_BIN/pg_ctl" -D "$data" -l "$log" -w -t 60 \
		-o "-p $port -k $sock -c listen_addresses=127.0.0.1 $*" start >/dev/null
}
