#!/usr/bin/env bash
# memory-dir.sh
#
# Prints /dev/shm when it is a writable tmpfs (memory) with at least 2 GiB
# free, and nothing otherwise (no /dev/shm, a small one such as Docker's
# 64 MB default, or another file system). The tests put there what they
# create and remove by the thousand: the throwaway PostgreSQL cluster
# (scripts/with-postgres.sh) and the go command's work directory, where it
# links each test binary (Makefile: GOTMPDIR). On the disk's ext4 the
# kernel's block and inode allocation for those files cost make test-short
# about 11 CPU-seconds.
set -euo pipefail

shm=/dev/shm
if [ -d "$shm" ] && [ -w "$shm" ] &&
	[ "$(stat -f -c %T "$shm" 2>/dev/null)" = tmpfs ] &&
	[ "$(df -Pk "$shm" | awk 'NR == 2 { print $4 }')" -ge $((2 * 1024 * 1024)) ]; then
	echo "$shm"
fi
