package report

import (
	"strings"
	"unicode"

	"github.com/mergeguard/mergeguard/review"
)

// rule is the check a finding comes from, as SARIF and rdjson name it.
type rule struct {
	id, name, description, helpURI string
	// tag is the finding's category, for code scanning's filters.
	tag string
}

// ruleOf returns the rule of a finding: for a linter's or analyzer's
// finding its tool and check (shellcheck/SC2086, actionlint/expression,
// govet/printf, gitleaks/aws-access-token, hadolint/DL3006,
// buildkit/UndefinedVar, mergeguard/private-keys), for the model's its
// category (mergeguard/security).
func ruleOf(f review.Finding) rule {
	agent, isTool := strings.CutPrefix(f.Agent, "analyzer:")
	if !isTool {
		return categoryRule(f.Category)
	}
	tag := categoryName(f.Category)
	tool, help := agent, ""
	switch {
	case agent == "shellcheck" && f.Rule != "":
		help = "https://www.shellcheck.net/wiki/" + f.Rule
	case agent == "actionlint" && f.Rule != "":
		help = "https://github.com/rhysd/actionlint/blob/main/docs/checks.md"
	case agent == "govet" && f.Rule != "":
		help = "https://pkg.go.dev/golang.org/x/tools/go/analysis/passes/" + f.Rule
	case agent == "secrets" && f.Rule != "":
		tool, help = "gitleaks", "https://github.com/gitleaks/gitleaks/blob/master/config/gitleaks.toml"
	case agent == "dockerfile" && strings.HasPrefix(f.Rule, "DL"):
		tool, help = "hadolint", "https://github.com/hadolint/hadolint/wiki/"+f.Rule
	case agent == "dockerfile" && strings.HasPrefix(f.Rule, "MGD"):
		tool, help = "mergeguard", "https://docs.docker.com/build/building/best-practices/"
	case agent == "dockerfile" && f.Rule != "":
		tool, help = "buildkit", "https://docs.docker.com/go/dockerfile/rule/"+kebab(f.Rule)+"/"
	default: // a single-check analyzer: the check is the agent
		return rule{id: "mergeguard/" + agent, name: agent, description: "MergeGuard's " + agent + " check",
			helpURI: sarifToolURI + "/blob/main/docs/architecture.md#analyzers-and-linters", tag: tag}
	}
	return rule{id: tool + "/" + f.Rule, name: f.Rule, description: tool + " " + f.Rule, helpURI: help, tag: tag}
}

// categoryRule is the rule of the model's findings of a category.
func categoryRule(c review.Category) rule {
	name := categoryName(c)
	return rule{id: "mergeguard/" + name, name: name, description: "MergeGuard " + name + " finding", tag: name}
}

// categoryName names a category; an empty one reads "uncategorised".
func categoryName(c review.Category) string {
	if c == "" {
		return "uncategorised"
	}
	return string(c)
}

// kebab writes a BuildKit rule name (UndefinedVar) as its documentation
// page's (undefined-var).
func kebab(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
