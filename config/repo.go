package config

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// RepoFileName is the per-repository configuration file, read from the base
// branch of a pull request (never from its head).
const RepoFileName = ".mergeguard.yml"

// Repo is the per-repository configuration, the schema of .mergeguard.yml
// (docs/architecture.md). The zero value is not meaningful: start from
// DefaultRepo and decode over it with ParseRepo.
type Repo struct {
	// Enabled turns MergeGuard off for the repository when false.
	Enabled bool `yaml:"enabled" json:"enabled"`
	// AutoReview says which pull requests are reviewed without a command.
	AutoReview AutoReview `yaml:"auto_review" json:"auto_review"`
	// PathFilters are doublestar globs; a leading "!" excludes. A file is
	// reviewed when it matches no exclude and, if any include is given,
	// at least one include.
	PathFilters []string `yaml:"path_filters" json:"path_filters"`
	// PathInstructions adds review instructions for files matching a glob.
	PathInstructions []PathInstruction `yaml:"path_instructions" json:"path_instructions"`
	// Instructions are repository-wide review instructions for the model.
	Instructions string `yaml:"instructions" json:"instructions"`
	// ConventionFiles are extra repository files whose text is given to the
	// model as conventions (AGENTS.md and CONTRIBUTING.md are always read).
	ConventionFiles []string `yaml:"convention_files" json:"convention_files"`
	// FocusAreas restricts findings to these categories (security, bug,
	// performance, quality); empty means all.
	FocusAreas []string `yaml:"focus_areas" json:"focus_areas"`
	// SeverityThreshold drops findings below this severity.
	SeverityThreshold string `yaml:"severity_threshold" json:"severity_threshold"`
	// IncludeStyle keeps style findings.
	IncludeStyle bool `yaml:"include_style" json:"include_style"`
	// AllowApprove lets the bot submit APPROVE reviews.
	AllowApprove bool `yaml:"allow_approve" json:"allow_approve"`
	// BlockingSeverity is the lowest severity of a verified finding that
	// makes the verdict request_changes.
	BlockingSeverity string `yaml:"blocking_severity" json:"blocking_severity"`
	// MaxFiles skips the model review of pull requests changing more
	// files; the built-in analyzers and linters still read every file.
	MaxFiles int `yaml:"max_files" json:"max_files"`
	// Language is the natural language of review comments, e.g. "en".
	Language string `yaml:"language" json:"language"`
	// Incremental reviews, on a push that adds commits to a reviewed head,
	// only what those commits changed (docs/architecture.md).
	Incremental bool `yaml:"incremental" json:"incremental"`
	// Check configures MergeGuard's check run.
	Check Check `yaml:"check" json:"check"`
	// Chat configures MergeGuard's answers in its threads and to ask.
	Chat Chat `yaml:"chat" json:"chat"`
	// Learnings configures what MergeGuard learns from writers' feedback.
	Learnings Learnings `yaml:"learnings" json:"learnings"`
	// Secrets configures what a pushed secret does to the gate.
	Secrets Secrets `yaml:"secrets" json:"secrets"`
	// Memory configures the memory of dismissals (docs/quality.md).
	Memory RepoMemory `yaml:"memory" json:"memory"`
}

// RepoMemory configures the memory of dismissals of a repository.
type RepoMemory struct {
	// SuppressAfter is how many dismissals by writers a new finding must
	// be similar to for it not to be posted (recorded as suppressed); 0
	// turns the memory off. Secrets and critical security findings are
	// never suppressed.
	SuppressAfter int `yaml:"suppress_after" json:"suppress_after"`
}

// MaxSuppressAfter caps memory.suppress_after.
const MaxSuppressAfter = 100

// Secrets configures the gate for secrets.
type Secrets struct {
	// Removed is what a secret a later push removed does: it was pushed,
	// so it stays in the branch's history and is exposed; "block" keeps
	// the pull request blocked until a writer dismisses it, "warn" reports
	// it without blocking.
	Removed string `yaml:"removed" json:"removed"`
	// BlockInTests makes a secret in a test-fixture path (testdata/,
	// fixtures/, *_test.go, ...) block like any other; by default it is a
	// warning that is posted but never blocks.
	BlockInTests bool `yaml:"block_in_tests" json:"block_in_tests"`
}

// Values of secrets.removed.
const (
	SecretsRemovedBlock = "block"
	SecretsRemovedWarn  = "warn"
)

// SecretsRemovedValues are the values secrets.removed takes.
func SecretsRemovedValues() []string { return []string{SecretsRemovedBlock, SecretsRemovedWarn} }

// Chat configures MergeGuard's answers.
type Chat struct {
	// MaxAnswersPerThread is how many answers MergeGuard gives in one
	// review thread; past it, one note says so and it stays silent.
	MaxAnswersPerThread int `yaml:"max_answers_per_thread" json:"max_answers_per_thread"`
}

// Learnings configures learnings.
type Learnings struct {
	// AutoActivate makes a learning proposed from a writer's feedback
	// active at once, without /mergeguard learn, when the writer stated it
	// word for word (review.InOwnWords).
	AutoActivate bool `yaml:"auto_activate" json:"auto_activate"`
}

// Check configures the MergeGuard check run of each reviewed head.
type Check struct {
	// BlockingConclusion is the check's conclusion while a blocking
	// finding is open: failure, neutral or action_required.
	BlockingConclusion string `yaml:"blocking_conclusion" json:"blocking_conclusion"`
}

// BlockingConclusions are the values check.blocking_conclusion takes.
func BlockingConclusions() []string { return []string{"failure", "neutral", "action_required"} }

// AutoReview gates automatic reviews.
type AutoReview struct {
	// Enabled turns automatic reviews on; commands work either way.
	Enabled bool `yaml:"enabled" json:"enabled"`
	// Drafts reviews draft pull requests too.
	Drafts bool `yaml:"drafts" json:"drafts"`
	// BaseBranches are globs of base branches to review; empty means the
	// repository's default branch and any other.
	BaseBranches []string `yaml:"base_branches" json:"base_branches"`
	// IgnoreTitleKeywords skips the model review of pull requests whose
	// title holds one of these as a word or tag, case-insensitively ("WIP"
	// in "[WIP] x" or "WIP: x", not in "Wipe"); the built-in analyzers and
	// linters still review them.
	IgnoreTitleKeywords []string `yaml:"ignore_title_keywords" json:"ignore_title_keywords"`
	// SkipLabels skips the model review of pull requests carrying one of
	// these labels; the built-in analyzers and linters still review them.
	SkipLabels []string `yaml:"skip_labels" json:"skip_labels"`
	// Bots reviews pull requests opened by bot accounts too.
	Bots bool `yaml:"bots" json:"bots"`
}

// PathInstruction adds instructions for files matching Path.
type PathInstruction struct {
	Path         string `yaml:"path" json:"path"`
	Instructions string `yaml:"instructions" json:"instructions"`
}

// ParseRepo decodes a .mergeguard.yml over DefaultRepo and validates it.
// Every problem is reported at once, each as a *LineError naming the key and
// its line, e.g. `.mergeguard.yml:7: unknown key "auto_reveiw"`; with an
// error it returns DefaultRepo unchanged.
func ParseRepo(data []byte) (Repo, error) {
	return ParseRepoOver(DefaultRepo(), data)
}

// ParseRepoOver is ParseRepo starting from base instead of DefaultRepo, so an
// operator's Config.Review defaults apply to keys the file leaves out.
func ParseRepoOver(base Repo, data []byte) (Repo, error) {
	r := base
	pos, err := decodeYAML(RepoFileName, data, &r)
	if err != nil {
		return base, err
	}
	var errs []error
	r.check(func(path, msg string) {
		errs = append(errs, &LineError{File: RepoFileName, Line: pos[path], Msg: path + ": " + msg})
	})
	if len(errs) > 0 {
		return base, errors.Join(errs...)
	}
	return r, nil
}

// check reports each invalid value by its key path.
func (r Repo) check(report func(path, msg string)) {
	oneOf(report, "severity_threshold", r.SeverityThreshold, SeverityNames())
	oneOf(report, "blocking_severity", r.BlockingSeverity, SeverityNames())
	oneOf(report, "check.blocking_conclusion", r.Check.BlockingConclusion, BlockingConclusions())
	oneOf(report, "secrets.removed", r.Secrets.Removed, SecretsRemovedValues())
	if n := r.Chat.MaxAnswersPerThread; n < 0 || n > 50 {
		report("chat.max_answers_per_thread", fmt.Sprintf("must be between 0 and 50 (0: never answer), got %d", n))
	}
	for i, a := range r.FocusAreas {
		oneOf(report, fmt.Sprintf("focus_areas[%d]", i), a, CategoryNames())
	}
	for i, f := range r.PathFilters {
		glob(report, fmt.Sprintf("path_filters[%d]", i), strings.TrimPrefix(f, "!"))
	}
	for i, pi := range r.PathInstructions {
		glob(report, fmt.Sprintf("path_instructions[%d].path", i), pi.Path)
		if strings.TrimSpace(pi.Instructions) == "" {
			report(fmt.Sprintf("path_instructions[%d].instructions", i), "must not be empty")
		}
	}
	for i, b := range r.AutoReview.BaseBranches {
		glob(report, fmt.Sprintf("auto_review.base_branches[%d]", i), b)
	}
	for i, k := range r.AutoReview.IgnoreTitleKeywords {
		if strings.TrimSpace(k) == "" {
			report(fmt.Sprintf("auto_review.ignore_title_keywords[%d]", i), "must not be empty (it would match every title)")
		}
	}
	for i, l := range r.AutoReview.SkipLabels {
		if strings.TrimSpace(l) == "" {
			report(fmt.Sprintf("auto_review.skip_labels[%d]", i), "must not be empty")
		}
	}
	for i, f := range r.ConventionFiles {
		if !insideRepo(f) {
			report(fmt.Sprintf("convention_files[%d]", i), fmt.Sprintf("%q is not a relative path inside the repository", f))
		}
	}
	if n := r.Memory.SuppressAfter; n < 0 || n > MaxSuppressAfter {
		report("memory.suppress_after", fmt.Sprintf("must be between 0 and %d (0: never suppress), got %d", MaxSuppressAfter, n))
	}
	if r.MaxFiles < 0 {
		report("max_files", fmt.Sprintf("must not be negative (0 means no limit), got %d", r.MaxFiles))
	}
}

func oneOf[T ~string](report func(path, msg string), path, v string, allowed []T) {
	if slices.Contains(allowed, T(v)) {
		return
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	report(path, fmt.Sprintf("%q is not one of %s", v, strings.Join(names, ", ")))
}

func glob(report func(path, msg string), path, pattern string) {
	switch {
	case pattern == "":
		report(path, "must not be an empty glob")
	case !doublestar.ValidatePattern(pattern):
		report(path, fmt.Sprintf("%q is not a valid glob", pattern))
	}
}

// insideRepo reports whether p is a non-empty slash-separated relative path
// that stays inside the repository.
func insideRepo(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, `\`) {
		return false
	}
	c := path.Clean(p)
	return c != "." && c != ".." && !strings.HasPrefix(c, "../")
}

// Reviewable reports whether file (a slash-separated path, relative to
// the repository root) passes PathFilters: it matches no "!" exclude and, if
// any include is given, at least one include. Globs follow doublestar: "*"
// stays within a directory, "**" spans directories, so "**/*.lock" matches
// lock files anywhere and "*.lock" only at the root.
func (r Repo) Reviewable(file string) bool {
	hasIncludes, included := false, false
	for _, f := range r.PathFilters {
		if exclude, ok := strings.CutPrefix(f, "!"); ok {
			if doublestar.MatchUnvalidated(exclude, file) {
				return false
			}
			continue
		}
		hasIncludes = true
		if doublestar.MatchUnvalidated(f, file) {
			included = true
		}
	}
	return !hasIncludes || included
}

// InstructionsFor returns the PathInstructions that apply to file, in the
// order the configuration lists them. The repository-wide
// Instructions are not included.
func (r Repo) InstructionsFor(file string) []string {
	var out []string
	for _, pi := range r.PathInstructions {
		if doublestar.MatchUnvalidated(pi.Path, file) {
			out = append(out, pi.Instructions)
		}
	}
	return out
}
