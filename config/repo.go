package config

// RepoFileName is the per-repository configuration file, read from the base
// branch of a pull request (never from its head).
const RepoFileName = ".mergeguard.yml"

// Repo is the per-repository configuration, the schema of .mergeguard.yml
// (DESIGN.md section 6). The zero value is not meaningful: start from
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
	// MaxFiles skips the review of pull requests changing more files.
	MaxFiles int `yaml:"max_files" json:"max_files"`
	// Language is the natural language of review comments, e.g. "en".
	Language string `yaml:"language" json:"language"`
}

// AutoReview gates automatic reviews.
type AutoReview struct {
	// Enabled turns automatic reviews on; commands work either way.
	Enabled bool `yaml:"enabled" json:"enabled"`
	// Drafts reviews draft pull requests too.
	Drafts bool `yaml:"drafts" json:"drafts"`
	// BaseBranches are globs of base branches to review; empty means the
	// repository's default branch and any other.
	BaseBranches []string `yaml:"base_branches" json:"base_branches"`
	// IgnoreTitleKeywords skips pull requests whose title contains one of
	// these, case-insensitively (e.g. "WIP").
	IgnoreTitleKeywords []string `yaml:"ignore_title_keywords" json:"ignore_title_keywords"`
	// SkipLabels skips pull requests carrying one of these labels.
	SkipLabels []string `yaml:"skip_labels" json:"skip_labels"`
	// Bots reviews pull requests opened by bot accounts too.
	Bots bool `yaml:"bots" json:"bots"`
}

// PathInstruction adds instructions for files matching Path.
type PathInstruction struct {
	Path         string `yaml:"path" json:"path"`
	Instructions string `yaml:"instructions" json:"instructions"`
}

// DefaultRepo returns the configuration of a repository without a
// .mergeguard.yml.
func DefaultRepo() Repo {
	return Repo{
		Enabled: true,
		AutoReview: AutoReview{
			Enabled:             true,
			IgnoreTitleKeywords: []string{"WIP", "[skip review]", "DO NOT MERGE"},
		},
		SeverityThreshold: "info",
		BlockingSeverity:  "critical",
		MaxFiles:          300,
		Language:          "en",
	}
}
