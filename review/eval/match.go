package eval

import (
	"context"
	"fmt"
	"strings"

	"github.com/mergeguard/mergeguard/review"
)

// DefaultLineTolerance is how many lines a finding may be off a golden
// comment's range and still match it.
const DefaultLineTolerance = 3

// Pair says that finding Finding describes the problem of golden comment
// Golden (indices into a case's lists); By is "location" or "judge".
type Pair struct {
	Golden  int    `json:"golden"`
	Finding int    `json:"finding"`
	By      string `json:"by"`
}

// Judge decides which findings describe the same problem as a golden
// comment; Martian's method. It returns the indices of those findings.
type Judge interface {
	Same(ctx context.Context, c Case, g Golden, findings []review.Finding) ([]int, review.CostInfo, error)
}

// AtLocation reports whether f matches g by location: the same file, the
// finding's lines within tolerance of the golden range, and the same
// category when both have one. A golden comment without a file or line
// never matches by location.
func AtLocation(g Golden, f review.Finding, tolerance int) bool {
	start, end := g.Lines()
	if g.File == "" || start == 0 || f.FilePath != g.File {
		return false
	}
	if g.Category != "" && f.Category != "" && !strings.EqualFold(g.Category, string(f.Category)) {
		return false
	}
	fs, fe := f.LineStart, max(f.LineEnd, f.LineStart)
	return fs <= end+tolerance && fe >= start-tolerance
}

// Match pairs a case's golden comments with findings: by location, or,
// when judge is not nil, by the judge's decision alone (it is told the
// location). It returns the pairs and what the judge cost.
func Match(ctx context.Context, c Case, findings []review.Finding, tolerance int, judge Judge) ([]Pair, review.CostInfo, error) {
	var pairs []Pair
	var cost review.CostInfo
	for gi, g := range c.Golden {
		if judge == nil {
			for fi, f := range findings {
				if AtLocation(g, f, tolerance) {
					pairs = append(pairs, Pair{Golden: gi, Finding: fi, By: "location"})
				}
			}
			continue
		}
		if len(findings) == 0 {
			continue
		}
		idx, c1, err := judge.Same(ctx, c, g, findings)
		cost = cost.Add(c1)
		if err != nil {
			return nil, cost, fmt.Errorf("judge golden comment %d: %w", gi+1, err)
		}
		for _, fi := range idx {
			if fi >= 0 && fi < len(findings) {
				pairs = append(pairs, Pair{Golden: gi, Finding: fi, By: "judge"})
			}
		}
	}
	return pairs, cost, nil
}
