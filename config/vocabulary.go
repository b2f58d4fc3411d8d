package config

// The names .mergeguard.yml and the API may use for finding severities and
// categories. The schema owns them (docs/architecture.md, Packages: config
// imports nothing of ours); package review's typed constants spell the same
// names, which review's tests hold equal to these lists.

// SeverityNames lists the finding severities, most important first.
func SeverityNames() []string { return []string{"critical", "warning", "info", "style"} }

// CategoryNames lists the finding categories (focus areas).
func CategoryNames() []string { return []string{"security", "bug", "performance", "quality"} }
