#!/usr/bin/env bash
# slice.sh: materialises the CI slice of the real-world set
# (testdata/eval-real/slice; docs/evaluation.md "The real-world set") from
# the mirrors: for each commit of scripts/eval-real/slice.txt, the files of
# the head tree a review needs (the files the commit changed; for a Go
# module, every .go file, go.mod and go.sum; the licence) under
# trees/owner+name@<12 hex>/head/, the commit's diff as
# trees/.../change.diff, and the commit's truth files copied from
# testdata/eval-real/{analyzers,context}/.
#
# usage: scripts/eval-real/slice.sh   (MIRRORS defaults to /work/.mirror)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
mirrors=${MIRRORS:-/work/.mirror}
set_dir=$root/testdata/eval-real
slice=$set_dir/slice

while read -r repo commit _; do
	case "$repo" in "#"* | "") continue ;; esac
	name=${repo/\//+}
	id=$name@${commit:0:12}
	git_dir=$mirrors/$name/repo
	tree=$slice/trees/$id
	rm -rf "$tree"
	mkdir -p "$tree/head"
	git --git-dir="$git_dir" diff --binary -M "$commit^" "$commit" >"$tree/change.diff"
	mapfile -t paths < <(
		{
			git --git-dir="$git_dir" diff --name-only --diff-filter=d -M "$commit^" "$commit"
			git --git-dir="$git_dir" ls-tree -r --name-only "$commit" | grep -E '^(LICEN[CS]E|COPYING)' || true
			if git --git-dir="$git_dir" cat-file -e "$commit:go.mod" 2>/dev/null; then
				git --git-dir="$git_dir" ls-tree -r --name-only "$commit" | grep -E '\.go$|^go\.(mod|sum)$' | grep -v -e '^vendor/' -e '/vendor/'
			fi
		} | sort -u
	)
	git --git-dir="$git_dir" archive --format=tar "$commit" -- "${paths[@]}" | tar -x -C "$tree/head"
	for kind in analyzers context; do
		mkdir -p "$slice/$kind"
		if [ -f "$set_dir/$kind/$id.json" ]; then cp "$set_dir/$kind/$id.json" "$slice/$kind/"; fi
	done
	echo "$id: $(find "$tree/head" -type f | wc -l) files, $(du -sk "$tree/head" | cut -f1) KB" >&2
done <"$root/scripts/eval-real/slice.txt"
