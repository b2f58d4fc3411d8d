#!/usr/bin/env bash
# Reviews each pinned commit of commits.txt without a model
# (`mergeguard review --base C^ --head C --format json`) and counts what
# the secret detectors did: REQUEST_CHANGES caused by a secret, blocking
# secret findings (verified, at or above critical), and all secret
# findings. Usage:
#
#   scripts/secrets-real/measure.sh MERGEGUARD_BINARY CHECKOUTS_DIR [OUT.tsv]
#
# CHECKOUTS_DIR holds one git checkout per repository, named after the
# repository (gitleaks, detect-secrets, git-secrets), each with the pinned
# commits in its history. It prints one line per commit and the totals.
set -euo pipefail

bin=${1:?mergeguard binary}
dir=${2:?directory of checkouts}
out=${3:-/dev/null}
list="$(dirname "$0")/commits.txt"
secret='select(.agent == "analyzer:secrets" or .agent == "analyzer:private-keys")'

printf 'repo\tcommit\tverdict\tsecret_changes\tblocking_secrets\tsecret_findings\n' | tee "$out"
reviews=0 changes=0 blocking=0 found=0
while read -r repo commit; do
	case $repo in '' | '#'*) continue ;; esac
	checkout="$dir/${repo#*/}"
	json=$("$bin" review --repo "$checkout" --base "$commit^" --head "$commit" --format json 2>/dev/null)
	verdict=$(jq -r .verdict <<<"$json")
	b=$(jq "[.files[].findings[] | $secret | select(.verification_status == \"verified\" and .severity == \"critical\")] | length" <<<"$json")
	n=$(jq "[.files[].findings[] | $secret] | length" <<<"$json")
	c=0
	if [[ $verdict == request_changes && $b -gt 0 ]]; then c=1; fi
	printf '%s\t%s\t%s\t%d\t%d\t%d\n' "$repo" "$commit" "$verdict" "$c" "$b" "$n" | tee -a "$out"
	reviews=$((reviews + 1)) changes=$((changes + c)) blocking=$((blocking + b)) found=$((found + n))
done <"$list"
printf 'TOTAL\t%d reviews\t%d REQUEST_CHANGES from secrets\t%d blocking secret findings\t%d secret findings\n' \
	"$reviews" "$changes" "$blocking" "$found" | tee -a "$out"
