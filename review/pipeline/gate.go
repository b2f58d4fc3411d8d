package pipeline

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
)

// Gate decides whether an automatic review of change is skipped as a whole
// under the repository's configuration, and says why. It checks, in order:
// MergeGuard disabled, automatic reviews off, drafts, bot authors and base
// branches: what the repository's people decide, not the change's author.
// What the author controls (title keywords, skip labels, the number of
// files) skips the model review only (ModelGate, and max_files in Run): the
// built-in analyzers and linters review every pull request and decide its
// check.
//
// Gate is for automatic reviews only: an explicit request (a comment command,
// the CLI, the API) is refused only when the repository disabled MergeGuard.
func Gate(change review.Change, repo config.Repo) (skip bool, reason string) {
	if !repo.Enabled {
		return true, "MergeGuard is disabled for this repository (enabled: false)"
	}
	ar := repo.AutoReview
	if !ar.Enabled {
		return true, "automatic reviews are off (auto_review.enabled: false)"
	}
	if change.Draft && !ar.Drafts {
		return true, "draft pull request (auto_review.drafts: false)"
	}
	if isBot(change) && !ar.Bots {
		return true, fmt.Sprintf("opened by bot %q (auto_review.bots: false)", change.Author)
	}
	if len(ar.BaseBranches) > 0 && !matchesAny(ar.BaseBranches, change.BaseRef) {
		return true, fmt.Sprintf("base branch %q matches none of auto_review.base_branches", change.BaseRef)
	}
	return false, ""
}

// ModelGate says why the model review of an automatic review of change is
// skipped, or "" when it is not: a title keyword (ignore_title_keywords,
// matched as a word or tag: titleHas) or a skip label. The built-in
// analyzers and linters review the change all the same.
func ModelGate(change review.Change, repo config.Repo) string {
	ar := repo.AutoReview
	for _, kw := range ar.IgnoreTitleKeywords {
		if titleHas(change.Title, kw) {
			return fmt.Sprintf("title contains %q (auto_review.ignore_title_keywords)", kw)
		}
	}
	for _, l := range change.Labels {
		for _, s := range ar.SkipLabels {
			if strings.EqualFold(l, s) {
				return fmt.Sprintf("labelled %q (auto_review.skip_labels)", l)
			}
		}
	}
	return ""
}

// titleHas reports whether title holds kw as a word or a tag,
// case-insensitively: where kw begins or ends with a letter or digit, the
// title may not go on with one there. "WIP" is in "[WIP] x", "WIP: x" and
// "x (wip)", not in "Wipe stale sessions"; "[skip review]" is wherever its
// brackets are.
func titleHas(title, kw string) bool {
	t, k := strings.ToLower(title), strings.ToLower(strings.TrimSpace(kw))
	if k == "" {
		return false
	}
	first, _ := utf8.DecodeRuneInString(k)
	last, _ := utf8.DecodeLastRuneInString(k)
	for from := 0; from < len(t); {
		i := strings.Index(t[from:], k)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(k)
		before, _ := utf8.DecodeLastRuneInString(t[:start])
		after, _ := utf8.DecodeRuneInString(t[end:])
		if (!isWordRune(first) || start == 0 || !isWordRune(before)) && (!isWordRune(last) || end == len(t) || !isWordRune(after)) {
			return true
		}
		from = start + 1
	}
	return false
}

// isWordRune reports whether r is part of a word: a letter, a digit or "_".
func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// isBot reports whether the change was opened by a bot account: the host
// said so, or the login carries GitHub's "[bot]" suffix.
func isBot(c review.Change) bool {
	return c.AuthorBot || strings.HasSuffix(strings.ToLower(c.Author), "[bot]")
}

// matchesAny reports whether name matches one of the doublestar globs. A
// malformed glob matches nothing (config validation reports it).
func matchesAny(globs []string, name string) bool {
	for _, g := range globs {
		if ok, err := doublestar.Match(g, name); err == nil && ok {
			return true
		}
	}
	return false
}
