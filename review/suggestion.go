package review

import (
	"strings"

	"github.com/mergeguard/mergeguard/internal/mdscan"
)

// SuggestionCode returns a suggestion as the code of a suggestion block:
// without carriage returns and the final newline, and without a markdown
// fence wrapped around it; "" when it is blank.
func SuggestionCode(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	s = strings.TrimRight(s, "\n")
	if strings.TrimSpace(s) == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) >= 2 && mdscan.Fence(strings.TrimSpace(lines[0])) != "" && mdscan.Fence(strings.TrimSpace(lines[len(lines)-1])) == strings.TrimSpace(lines[len(lines)-1]) {
		return strings.Join(lines[1:len(lines)-1], "\n")
	}
	return s
}
