#!/usr/bin/env bash
# The reference for measure.sh: gitleaks' own findings on each pinned
# commit of commits.txt, with the configuration and .gitleaksignore of the
# commit's parent (the base a review reads them from; gitleaks' default
# rules when there is none). Usage:
#
#   scripts/secrets-real/gitleaks.sh GITLEAKS_BINARY CHECKOUTS_DIR [OUT.tsv]
#
# GITLEAKS_BINARY is gitleaks v8.30.1, the version MergeGuard links:
#   GOBIN=/tmp/bin go install github.com/zricethezav/gitleaks/v8@v8.30.1
set -euo pipefail

bin=${1:?gitleaks binary}
dir=${2:?directory of checkouts}
out=${3:-/dev/null}
list="$(dirname "$0")/commits.txt"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf 'repo\tcommit\tgitleaks_findings\n' | tee "$out"
total=0
while read -r repo commit; do
	case $repo in '' | '#'*) continue ;; esac
	checkout="$dir/${repo#*/}"
	git -C "$checkout" show "$commit^:.gitleaks.toml" >"$tmp/config.toml" 2>/dev/null ||
		printf '[extend]\nuseDefault = true\n' >"$tmp/config.toml"
	git -C "$checkout" show "$commit^:.gitleaksignore" >"$tmp/ignore" 2>/dev/null || : >"$tmp/ignore"
	"$bin" git --no-banner --log-level error --exit-code 0 --log-opts="-1 $commit" \
		--config "$tmp/config.toml" --gitleaks-ignore-path "$tmp/ignore" \
		--report-format json --report-path "$tmp/report.json" "$checkout" >/dev/null
	n=$(jq length "$tmp/report.json")
	printf '%s\t%s\t%d\n' "$repo" "$commit" "$n" | tee -a "$out"
	total=$((total + n))
done <"$list"
printf 'TOTAL\t%d gitleaks findings\n' "$total" | tee -a "$out"
