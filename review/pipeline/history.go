package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/task"
)

// This file decides what a review of a pull request reviewed before covers
// (docs/architecture.md): the whole pull request, or only the hunks of its
// diff that the commits since the last reviewed head touched.

// Reasons for a full review the pipeline itself gives.
const (
	reasonConfigChanged  = "the repository's configuration changed since the last review"
	reasonNotIncremental = "incremental reviews are off (incremental: false)"
	reasonSinceUnread    = "the changes since the last review could not be read"
)

// configDigest identifies a repository configuration.
func configDigest(repo config.Repo) string {
	doc, err := json.Marshal(repo)
	if err != nil { // a Repo always marshals; never reached
		return ""
	}
	sum := sha256.Sum256(doc)
	return hex.EncodeToString(sum[:8])
}

// scope decides what the review covers. For an incremental review it
// returns the pull request's diff narrowed to the hunks the new commits
// touched, and the since-diff that says which lines they changed; for a
// full review d itself and nil.
func scope(h *task.History, repo config.Repo, d *diff.Diff) (review.Scope, *diff.Diff, *diff.Diff) {
	sc := review.Scope{Kind: review.ScopeFull, ConfigDigest: configDigest(repo)}
	switch {
	case h == nil:
		return sc, d, nil
	case h.Since == nil:
		sc.Reason = h.FullReason
		return sc, d, nil
	case !repo.Incremental:
		sc.Reason = reasonNotIncremental
		return sc, d, nil
	case h.Since.ConfigDigest != sc.ConfigDigest:
		sc.Reason = reasonConfigChanged
		return sc, d, nil
	}
	since, err := diff.ParseString(h.Since.Diff)
	if err != nil {
		sc.Reason = reasonSinceUnread
		return sc, d, nil
	}
	sc.Kind, sc.SinceSHA, sc.Commits, sc.Files = review.ScopeIncremental, h.Since.SHA, h.Since.Commits, len(since.Files)
	return sc, narrow(d, touchedLines(since)), since
}

// touchedLines maps each file the since-diff changed (by its new path) to
// the new-side lines its changes touch: added lines, and for removed lines
// the line that now stands where they were. A file the commits deleted maps
// to nothing.
func touchedLines(since *diff.Diff) map[string][]int {
	out := make(map[string][]int, len(since.Files))
	for _, f := range since.Files {
		if f.NewPath == "" {
			continue
		}
		lines := []int{}
		for _, h := range f.Hunks {
			next := h.NewStart // the new line the cursor stands before
			for _, l := range h.Lines {
				switch l.Kind {
				case diff.Add:
					lines = append(lines, int(l.NewLine))
					next = int(l.NewLine) + 1
				case diff.Delete:
					lines = append(lines, max(next, 1))
				default:
					next = int(l.NewLine) + 1
				}
			}
		}
		out[f.NewPath] = lines
	}
	return out
}

// narrow keeps of d the files the new commits touched and, in each, the
// hunks holding a touched line (every anchor stays a line of the pull
// request's diff). A renamed or binary file the commits touched is kept
// whole.
func narrow(d *diff.Diff, touched map[string][]int) *diff.Diff {
	out := &diff.Diff{}
	for _, f := range d.Files {
		lines, ok := touched[f.Path()]
		if !ok {
			continue
		}
		if len(f.Hunks) == 0 || f.Binary {
			// A binary file stays whole: the since-diff shows none of its
			// lines, and the secret scan reads it again.
			out.Files = append(out.Files, f)
			continue
		}
		nf := *f
		nf.Hunks, nf.Additions, nf.Deletions = nil, 0, 0
		for _, h := range f.Hunks {
			if !hunkTouched(h, lines) {
				continue
			}
			nf.Hunks = append(nf.Hunks, h)
			for _, l := range h.Lines {
				switch l.Kind {
				case diff.Add:
					nf.Additions++
				case diff.Delete:
					nf.Deletions++
				}
			}
		}
		if len(nf.Hunks) > 0 {
			out.Files = append(out.Files, &nf)
		}
	}
	return out
}

// hunkTouched reports whether one of lines falls in the hunk's new-side
// range (a hunk that only removes lines stands at NewStart).
func hunkTouched(h diff.Hunk, lines []int) bool {
	first, last := h.NewStart, h.NewStart+max(h.NewLines, 1)-1
	for _, n := range lines {
		if n >= first && n <= last {
			return true
		}
	}
	return false
}
