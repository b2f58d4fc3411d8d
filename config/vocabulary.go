package config

// The names .mergeguard.yml and the API may use for finding severities and
// categories. The schema owns them (docs/architecture.md, Packages: config
// imports nothing of ours); package review's typed constants spell the same
// names, which review's tests hold equal to these lists.

// SeverityNames lists the finding severities, most important first.
func SeverityNames() []string { return []string{"critical", "warning", "info", "style"} }

// CategoryNames lists the finding categories (focus areas).
func CategoryNames() []string { return []string{"security", "bug", "performance", "quality"} }

// DefaultArm names the default arm of a model comparison: llm.model with
// the default prompt, reviewing the pull requests no experiment takes.
const DefaultArm = "default"

// PromptVariantNames lists the reviewer prompt variants an experiment may
// name (llm.experiments[].prompt) besides the default prompt (""); package
// pipeline holds their texts, and its tests hold them equal to this list.
func PromptVariantNames() []string { return []string{"focused"} }
