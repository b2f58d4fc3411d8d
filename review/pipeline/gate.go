package pipeline

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
)

// Gate decides whether an automatic review of change is skipped under the
// repository's configuration, and says why. It checks, in order: MergeGuard
// disabled, automatic reviews off, drafts, bot authors, base branches, title
// keywords and skip labels. The max_files limit needs the changed files and
// is applied by Run once the diff is parsed.
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
	title := strings.ToLower(change.Title)
	for _, kw := range ar.IgnoreTitleKeywords {
		if kw != "" && strings.Contains(title, strings.ToLower(kw)) {
			return true, fmt.Sprintf("title contains %q (auto_review.ignore_title_keywords)", kw)
		}
	}
	for _, l := range change.Labels {
		for _, s := range ar.SkipLabels {
			if strings.EqualFold(l, s) {
				return true, fmt.Sprintf("labelled %q (auto_review.skip_labels)", l)
			}
		}
	}
	return false, ""
}

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
