#!/usr/bin/env bash
# Measures MergeGuard's go vet linter on real Go commits (issue 24): for each
# pinned commit, `mergeguard review --base C^ --head C --format json` without
# a model (its wall time, whether the printf checks ran with types, its go
# vet findings) beside `go vet` itself on the changed packages at C, run
# with the same passes, compared on the lines C added.
#
# usage: bench/govetreal/run.sh MERGEGUARD_BINARY [COMMITS_FILE] > results.tsv
#
# COMMITS_FILE (default bench/govetreal/commits.txt) lists "owner/name
# commit" lines. Each repository is cloned from $MIRRORS/owner+name/repo
# (default /work/.mirror, what the fetch tool makes) into $WORK (default a
# temporary directory). go vet downloads the commits' modules through the
# Go module proxy. Output: one tab-separated row per commit (repo, commit,
# seconds, printf typed yes/no, mergeguard govet findings, go vet findings
# on added lines, agreed, govet notes), then a summary on stderr.
set -euo pipefail

mg=$(realpath "$1")
commits=$(realpath "${2:-$(dirname "$0")/commits.txt}")
mirrors=${MIRRORS:-/work/.mirror}
work=${WORK:-$(mktemp -d)}
passes=(-appends -assign -atomic -bools -copylocks -defers -errorsas -httpresponse -ifaceassert
	-lostcancel -nilfunc -printf -shift -sigchanyzer -stdmethods -stringintconv -structtag
	-testinggoroutine -timeformat -unmarshal -unreachable -unusedresult -waitgroup)
read -ra extra <<<"${VET_EXTRA:-}" # more go vet flags, e.g. -composites
passes+=("${extra[@]}")

# added prints "file:line" for every line commit $1 added to Go files.
added() {
	git diff -U0 "$1^" "$1" -- '*.go' | awk '
		/^\+\+\+ b\// { f = substr($0, 7) }
		/^@@/ { split($3, a, ","); n = (a[2] == "" ? 1 : a[2]); s = substr(a[1], 2); for (i = 0; i < n; i++) print f ":" s + i }'
}

times=()
printf 'repo\tcommit\tseconds\tprintf_typed\tmergeguard\tgovet\tagreed\tnotes\n'
while read -r repo commit; do
	[ -z "$repo" ] && continue
	dir=$work/${repo/\//+}
	[ -d "$dir" ] || git clone -q --shared "$mirrors/${repo/\//+}/repo" "$dir"
	cd "$dir"
	git checkout -q -f "$commit"
	start=$(date +%s.%N)
	"$mg" review --base "$commit^" --head "$commit" --format json >"$work/out.json" 2>/dev/null || true
	secs=$(echo "$(date +%s.%N) - $start" | bc)
	times+=("$secs")
	notes=$(jq -r '[.notes[]? | select(test("govet"))] | join(" / ")' "$work/out.json")
	typed=yes
	if grep -qE 'the [a-z, ]*printf[a-z, ]* checks failed|limit \(|not available' <<<"$notes"; then typed=no; fi
	jq -r '.files[]?.findings[]? | select(.agent == "analyzer:govet") | "\(.file_path):\(.line_start)"' "$work/out.json" | sort -u >"$work/mg.txt"
	added "$commit" | sort -u >"$work/added.txt"
	pkgs=$(git diff --name-only "$commit^" "$commit" -- '*.go' | grep -v -e '^vendor/' -e '/vendor/' -e testdata/ |
		while read -r f; do [ -f "$f" ] && echo "./$(dirname "$f")"; done | sort -u)
	: >"$work/vet.txt"
	if [ -n "$pkgs" ]; then
		# shellcheck disable=SC2086
		GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0 go vet "${passes[@]}" $pkgs 2>&1 |
			sed -nE 's|^(\./)?([^: ]+\.go):([0-9]+):[0-9]+: .*|\2:\3|p' | sort -u >"$work/vet-all.txt" || true
		comm -12 "$work/vet-all.txt" "$work/added.txt" >"$work/vet.txt"
	fi
	printf '%s\t%s\t%.2f\t%s\t%d\t%d\t%d\t%s\n' "$repo" "$commit" "$secs" "$typed" \
		"$(wc -l <"$work/mg.txt")" "$(wc -l <"$work/vet.txt")" "$(comm -12 "$work/mg.txt" "$work/vet.txt" | wc -l)" "$notes"
done <"$commits"
printf '%s\n' "${times[@]}" | sort -n | awk '{ t[NR] = $1 } END {
	m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
	printf "commits %d, review seconds: median %.2f, max %.2f\n", NR, m, t[NR] }' >&2
