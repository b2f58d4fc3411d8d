#!/usr/bin/env bash
# measure-secrets.sh BINARY CHECKOUTS_DIR [COMMITS_FILE]
#
# Reviews, without a model, each commit of COMMITS_FILE (default
# scripts/secret-scanner-commits.txt: "owner/name sha" lines) with
# `BINARY review --base C^ --head C --format line --fail-on-changes`, in
# CHECKOUTS_DIR/owner+name (a full clone), and counts the commits whose
# review requests changes and the blocking secret findings (critical
# "Possible secret committed" / "Private key committed"), and the
# non-blocking ones. Issue 24's measure: on these commits of secret
# scanners (their rules and test data) no key is real, so every blocking
# secret finding is a false positive.
set -uo pipefail
bin=${1:?binary}
dir=${2:?checkouts directory}
list=${3:-$(dirname "$0")/secret-scanner-commits.txt}
commits=0 blocked=0 blocking=0 warned=0
while read -r repo sha; do
	case "$repo" in "#"* | "") continue ;; esac
	co="$dir/${repo/\//+}"
	out=$(cd "$co" && env -u OPENAI_API_KEY -u OPENAI_BASE_URL "$bin" review --base "$sha^" --head "$sha" --format line --fail-on-changes 2>/dev/null)
	code=$?
	commits=$((commits + 1))
	[ "$code" -eq 1 ] && grep -q "critical" <<<"$out" && blocked=$((blocked + 1))
	b=$(grep -cE ': critical: (Possible secret committed|Private key committed)' <<<"$out")
	w=$(grep -cE ': (warning|info): (Possible secret committed|Private key)' <<<"$out")
	blocking=$((blocking + b)) warned=$((warned + w))
	[ "$b" -gt 0 ] && echo "$repo $sha: $b blocking" >&2
done <"$list"
echo "commits=$commits request_changes=$blocked blocking_secret_findings=$blocking non_blocking_secret_findings=$warned"
