#!/usr/bin/env bash
# measure-govet.sh BINARY CHECKOUTS_DIR [COMMITS_FILE]
#
# Reviews, without a model, each commit of COMMITS_FILE (default
# scripts/go-commits.txt: "owner/name sha" lines) with `BINARY review
# --base C^ --head C`, in CHECKOUTS_DIR/owner+name (a full clone), and
# reports how many reviews ran go vet's printf check with types (no "failed
# on its partly typed code" note) and the reviews' wall time (median, max).
set -uo pipefail
bin=${1:?binary}
dir=${2:?checkouts directory}
list=${3:-$(dirname "$0")/go-commits.txt}
commits=0 typed=0
times=()
while read -r repo sha; do
	case "$repo" in "#"* | "") continue ;; esac
	co="$dir/${repo/\//+}"
	start=$(date +%s%N)
	out=$(cd "$co" && env -u OPENAI_API_KEY -u OPENAI_BASE_URL "$bin" review --base "$sha^" --head "$sha" --format text 2>/dev/null)
	ms=$((($(date +%s%N) - start) / 1000000))
	times+=("$ms")
	commits=$((commits + 1))
	if grep -q "partly typed code" <<<"$out"; then
		echo "$repo $sha: printf without types (${ms} ms)" >&2
	else
		typed=$((typed + 1))
	fi
done <"$list"
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
median=$(sed -n "$(((commits + 1) / 2))p" <<<"$sorted")
max=$(tail -n 1 <<<"$sorted")
echo "commits=$commits printf_typed=$typed median_ms=$median max_ms=$max"
