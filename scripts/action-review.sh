#!/usr/bin/env bash
# action-review.sh
#
# The review step of MergeGuard's GitHub Action (action.yml at the
# repository's root): builds `mergeguard` from the action's own source (or
# uses MERGEGUARD_BIN), reviews the pull request the workflow runs for
# through the GitHub API (`review --pr URL`, posting with `--post` when the
# post input is true), writes the report in the format asked, and sets the
# step's outputs (report, exit-code). It never fails the step
# itself: action.yml's last step does, after the SARIF upload.
#
# Inputs come as INPUT_* variables (action.yml maps them); GitHub's own
# GITHUB_* variables say which pull request. Outside a pull request the
# change of the last commit is reviewed from the checkout.
set -euo pipefail

out="${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set: this runs as a GitHub Actions step}"
tmp="${RUNNER_TEMP:-${TMPDIR:-/tmp}}"
format="${INPUT_FORMAT:-sarif}"
report="$tmp/mergeguard-report.$format"

mg="${MERGEGUARD_BIN:-}"
if [ -z "$mg" ]; then
	mg="$tmp/mergeguard"
	echo "Building mergeguard from ${MERGEGUARD_ACTION_PATH:?} ..." >&2
	(cd "$MERGEGUARD_ACTION_PATH" && go build -trimpath -o "$mg" ./cmd/mergeguard)
fi

# The model, when given; without an API key the analyzers and linters
# review alone.
[ -n "${INPUT_MODEL:-}" ] && export MERGEGUARD_MODEL="$INPUT_MODEL"
[ -n "${INPUT_BASE_URL:-}" ] && export OPENAI_BASE_URL="$INPUT_BASE_URL"
[ -n "${INPUT_API_KEY:-}" ] && export OPENAI_API_KEY="$INPUT_API_KEY"

args=(review --format "$format" --fail-level "${INPUT_FAIL_LEVEL:-none}")
if [[ "${GITHUB_REF:-}" =~ ^refs/pull/([0-9]+)/ ]]; then
	pr="${GITHUB_SERVER_URL:-https://github.com}/${GITHUB_REPOSITORY:?}/pull/${BASH_REMATCH[1]}"
	export GITHUB_TOKEN="${INPUT_GITHUB_TOKEN:?the github-token input is empty}"
	args+=(--pr "$pr")
	[ "${INPUT_POST:-true}" = "true" ] && args+=(--post)
else
	args+=(--base HEAD^ --head HEAD)
fi

code=0
"$mg" "${args[@]}" >"$report" || code=$?

{
	echo "report=$report"
	echo "exit-code=$code"
} >>"$out"
echo "mergeguard review exited $code; report in $report" >&2
