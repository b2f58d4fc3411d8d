package review

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
)

// TestVocabularyMatchesConfig holds review's typed severities and categories
// equal to the names the configuration schema accepts: a name added to one
// and not the other would be accepted in .mergeguard.yml and unknown to the
// pipeline, or the reverse.
func TestVocabularyMatchesConfig(t *testing.T) {
	var severities, categories []string
	for _, s := range Severities {
		severities = append(severities, string(s))
		if _, err := ParseSeverity(string(s)); err != nil {
			t.Errorf("ParseSeverity(%q): %v", s, err)
		}
	}
	for _, c := range Categories {
		categories = append(categories, string(c))
		if _, err := ParseCategory(string(c)); err != nil {
			t.Errorf("ParseCategory(%q): %v", c, err)
		}
	}
	if d := cmp.Diff(config.SeverityNames(), severities); d != "" {
		t.Errorf("severities differ from config.SeverityNames (-config +review):\n%s", d)
	}
	if d := cmp.Diff(config.CategoryNames(), categories); d != "" {
		t.Errorf("categories differ from config.CategoryNames (-config +review):\n%s", d)
	}
}
