package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// martianPR is one pull request of Martian's Code Review Bench offline
// golden-comment files: [{pr_title, url, comments: [{comment, severity}]}].
// Other fields are ignored.
type martianPR struct {
	PRTitle  string `json:"pr_title"`
	URL      string `json:"url"`
	Comments []struct {
		Comment  string `json:"comment"`
		Severity string `json:"severity"`
	} `json:"comments"`
}

// ParseMartian reads Martian's offline golden comments. The diffs are
// beside them: diffDir holds, for the pull request https://github.com/OWNER/REPO/pull/N,
// OWNER-REPO-N.diff or N.diff. Golden comments carry no file or line, so
// only a judge model can match them. A missing diff is an error naming
// every file looked for.
func ParseMartian(data []byte, diffDir string) ([]Case, error) {
	var prs []martianPR
	if err := json.Unmarshal(data, &prs); err != nil {
		return nil, fmt.Errorf("martian golden comments: %w", err)
	}
	var cases []Case
	var errs []error
	for i, pr := range prs {
		slug, number, err := prSlug(pr.URL)
		if err != nil {
			errs = append(errs, fmt.Errorf("pull request %d: %w", i+1, err))
			continue
		}
		text, err := readDiff(diffDir, slug+".diff", number+".diff")
		if err != nil {
			errs = append(errs, fmt.Errorf("pull request %d (%s): %w", i+1, pr.URL, err))
			continue
		}
		c := Case{ID: slug, Title: pr.PRTitle, Diff: text, Body: pr.URL}
		for _, g := range pr.Comments {
			c.Golden = append(c.Golden, Golden{Severity: strings.ToLower(strings.TrimSpace(g.Severity)), Text: g.Comment})
		}
		c.Clean = len(c.Golden) == 0
		cases = append(cases, c)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return cases, checkAll(cases)
}

// prSlug turns https://HOST/OWNER/REPO/pull/N into OWNER-REPO-N and N.
func prSlug(raw string) (slug, number string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("url %q: %w", raw, err)
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) != 4 || parts[2] != "pull" || parts[3] == "" {
		return "", "", fmt.Errorf("url %q is not https://HOST/OWNER/REPO/pull/N", raw)
	}
	return parts[0] + "-" + parts[1] + "-" + parts[3], parts[3], nil
}

// readDiff returns the first of names that exists in dir.
func readDiff(dir string, names ...string) (string, error) {
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err == nil {
			return string(b), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("read diff: %w", err)
		}
	}
	return "", fmt.Errorf("no diff: looked for %s in %s", strings.Join(names, " and "), dir)
}
