#!/usr/bin/env bash
# truth.sh: the analyzer truth of the real-world set (testdata/eval-real,
# docs/evaluation.md "The real-world set"): what the tools' own CLIs report
# on the lines each pinned commit added.
#
# usage: scripts/eval-real/truth.sh [COMMITS_FILE]
#
# COMMITS_FILE (default scripts/eval-real/commits.txt) lists "owner/name
# <40-hex commit>" lines. Each repository is read from
# $MIRRORS/owner+name/repo (default /work/.mirror; a bare clone made with
# `git clone --bare https://github.com/owner/name $MIRRORS/owner+name/repo`)
# and checked out under $WORK (default a temporary directory). For each
# commit C, in the checkout of C, the files of C's diff against C^ that
# MergeGuard's linters would check are run through:
#   - shellcheck --format=json1 --norc FILE (shell scripts: *.sh, *.bash,
#     *.ksh, *.dash, or a file without an extension whose #! line names sh,
#     bash, dash or ksh; the dialect is the one shellcheck picks itself);
#   - actionlint (the version in go.mod) on .github/workflows/*.y{a,}ml, with
#     the shellcheck above and without pyflakes, as MergeGuard runs it;
#   - go vet -json with MergeGuard's passes on the changed packages (modules
#     downloaded through the Go module proxy).
# Only findings on lines C added are kept: {tool, rule, path, line}. One
# JSON file per commit is written to $OUT (default
# testdata/eval-real/analyzers), owner+name@<12 hex>.json.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
list=$(realpath "${1:-$root/scripts/eval-real/commits.txt}")
mirrors=${MIRRORS:-/work/.mirror}
out=$(realpath -m "${OUT:-$root/testdata/eval-real/analyzers}")
work=${WORK:-$(mktemp -d)}
mkdir -p "$out" "$work"
shellcheck=${SHELLCHECK:-$(command -v shellcheck || true)}
[ -n "$shellcheck" ] || { echo "truth.sh: shellcheck is not installed (scripts/ensure-shellcheck.sh)" >&2; exit 1; }
command -v jq >/dev/null || { echo "truth.sh: jq is not installed" >&2; exit 1; }
actionlint_version=$(cd "$root" && go list -m -f '{{.Version}}' github.com/rhysd/actionlint)
[ -x "$work/actionlint" ] || (cd "$root" && GOFLAGS=-mod=mod go build -o "$work/actionlint" github.com/rhysd/actionlint/cmd/actionlint)
# MergeGuard's go vet passes (review/lint/govet.go) that go vet has.
vet_passes=(-appends -assign -atomic -bools -composites -copylocks -defers -errorsas -httpresponse -ifaceassert
	-lostcancel -nilfunc -printf -shift -sigchanyzer -stdmethods -stringintconv -structtag
	-testinggoroutine -timeformat -unmarshal -unreachable -unusedresult -waitgroup)

# added prints "path:line" for every line commit $1 added.
added() {
	git diff -U0 -M --no-color --no-ext-diff "$1^" "$1" | awk '
		/^\+\+\+ / { f = (substr($0, 5, 2) == "b/") ? substr($0, 7) : "" }
		/^@@/ && f != "" { split($3, a, ","); n = (a[2] == "" ? 1 : a[2]); s = substr(a[1], 2); for (i = 0; i < n; i++) print f ":" s + i }'
}

# is_shell says whether a head file is a script MergeGuard's shell linter checks.
is_shell() {
	case "$1" in
	*.sh | *.bash | *.ksh | *.dash) return 0 ;;
	esac
	case "$(basename "$1")" in *.*) return 1 ;; esac
	local line prog
	IFS= read -r line <"$1" || true
	[[ "$line" == '#!'* ]] || return 1
	read -ra words <<<"${line#\#!}"
	prog=$(basename "${words[0]:-}")
	if [ "$prog" = env ]; then
		for w in "${words[@]:1}"; do
			case "$w" in -* | *=*) continue ;; esac
			prog=$(basename "$w")
			break
		done
	fi
	case "$prog" in sh | bash | dash | ksh) return 0 ;; esac
	return 1
}

# truth writes the findings of commit $2 of repository $1 (checked out in
# the current directory) as JSON lines {tool, rule, path, line} on stdout,
# notes on fd 3, checked files on fd 4 ("tool path").
truth() {
	local commit=$2 files=() shells=() flows=() pkgs=()
	mapfile -t files < <(git diff --name-only --diff-filter=d -M "$commit^" "$commit" | grep -v -e '^vendor/' -e '/vendor/' || true)
	for f in "${files[@]}"; do
		[ -f "$f" ] || continue
		case "$f" in
		.github/workflows/*/*) ;;
		.github/workflows/*.yml | .github/workflows/*.yaml) flows+=("$f") ;;
		*.go) pkgs+=("./$(dirname "$f")") ;;
		*) if is_shell "$f"; then shells+=("$f"); fi ;;
		esac
	done
	for f in "${shells[@]}"; do
		echo "shellcheck $f" >&4
		"$shellcheck" --format=json1 --norc "$f" 2>/dev/null | jq -c --arg p "$f" \
			'.comments[] | select(.code != 1071) | {tool: "shellcheck", rule: "SC\(.code)", path: $p, line}' || true
	done
	if [ ${#flows[@]} -gt 0 ]; then
		printf 'actionlint %s\n' "${flows[@]}" >&4
		"$work/actionlint" -format '{{json .}}' -shellcheck="$shellcheck" -pyflakes= -no-color "${flows[@]}" 2>&3 |
			jq -c '.[]? | {tool: "actionlint", rule: .kind, path: .filepath, line}' || true
	fi
	if [ ${#pkgs[@]} -gt 0 ] && [ -f go.mod ]; then
		mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | sort -u)
		printf 'govet %s\n' "${pkgs[@]}" >&4
		GOFLAGS=-mod=mod GOTOOLCHAIN=local GOWORK=off go mod download >/dev/null 2>&1 || echo "go mod download failed" >&3
		local dir
		dir=$(pwd -P)
		# go vet -json prints its JSON on standard output (Go 1.26), build
		# errors on standard error.
		GOFLAGS=-mod=mod GOTOOLCHAIN=local GOWORK=off go vet -json "${vet_passes[@]}" "${pkgs[@]}" 2>"$work/vet.err" |
			jq -c --arg d "$dir/" '.. | objects | to_entries[] | select(.value | type == "array") | .key as $k |
				.value[] | select(.posn?) | (.posn | capture("^(?<p>.*):(?<l>[0-9]+):[0-9]+$")) as $at |
				{tool: "govet", rule: $k, path: ($at.p | ltrimstr($d)), line: ($at.l | tonumber)}' ||
			echo "go vet failed: $(grep -v '^#' "$work/vet.err" | head -c 300 | tr '\n' ' ')" >&3
	fi
}

while read -r repo commit _; do
	case "$repo" in "#"* | "") continue ;; esac
	name=${repo/\//+}
	dir=$work/$name
	[ -d "$dir" ] || git clone -q --shared --no-checkout "$mirrors/$name/repo" "$dir"
	(
		cd "$dir"
		git checkout -q -f --detach "$commit"
		git clean -qfdx
		added "$commit" | sort -u >"$work/added.txt"
		truth "$repo" "$commit" >"$work/all.jsonl" 3>"$work/notes.txt" 4>"$work/checked.txt"
		jq -c --rawfile added "$work/added.txt" \
			'($added | split("\n") | map(select(. != "") | {key: ., value: true}) | from_entries) as $set |
			select($set[.path + ":" + (.line | tostring)] // false)' \
			"$work/all.jsonl" | sort -u >"$work/kept.jsonl"
		jq -n --arg repo "$repo" --arg commit "$commit" --arg sc "$("$shellcheck" --version | sed -n 's/^version: //p')" \
			--arg al "$actionlint_version" --arg go "$(go env GOVERSION)" \
			--slurpfile f "$work/kept.jsonl" --rawfile checked "$work/checked.txt" --rawfile notes "$work/notes.txt" \
			'{repo: $repo, commit: $commit, tools: {shellcheck: $sc, actionlint: $al, go: $go},
			  checked: ($checked | split("\n") | map(select(. != "") | split(" ") | {tool: .[0], path: .[1]})),
			  findings: ($f | sort_by(.path, .line, .tool, .rule)),
			  notes: ($notes | split("\n") | map(select(. != "")) | unique)}' >"$out/$name@${commit:0:12}.json"
		echo "$repo ${commit:0:12}: $(jq '.findings | length' "$out/$name@${commit:0:12}.json") findings on added lines" >&2
	)
done <"$list"
