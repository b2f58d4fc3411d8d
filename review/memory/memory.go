package memory

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/mergeguard/mergeguard/review"
)

// Dismissal is a finding a writer dismissed on a pull request of the
// repository, as the ledger recorded it.
type Dismissal struct {
	PRNumber    int
	Fingerprint string
	Finding     review.Finding
	// By is who dismissed it and How how (review.DismissedThreadResolved,
	// ...); At when.
	By, How string
	At      time.Time
	// CommentID is the review comment the finding was posted as, 0 when
	// it was not posted inline.
	CommentID int64
}

// Revival is a suppressed finding a writer revived: the dismissals its
// pattern matched, made before At, no longer suppress findings similar
// to it or to them.
type Revival struct {
	Finding review.Finding
	By      string
	At      time.Time
}

// Match is a dismissal a finding is similar to.
type Match struct {
	PRNumber    int     `json:"pr_number"`
	Fingerprint string  `json:"fingerprint"`
	CommentID   int64   `json:"comment_id,omitempty"`
	By          string  `json:"by"`
	How         string  `json:"how"`
	Similarity  float64 `json:"similarity"`
}

// Suppressed is a finding that was not posted, with the dismissals it
// matched, most similar first.
type Suppressed struct {
	Finding review.Finding `json:"finding"`
	Matches []Match        `json:"matches"`
}

// Never reports whether f is never suppressed, however many dismissals
// it matches: a committed secret (a secret detector's finding) is leaked
// whatever was dismissed before, and a critical security finding is too
// costly to lose to a pattern.
func Never(f review.Finding) bool {
	return review.IsSecretDetector(f.Agent) ||
		(f.Severity == review.SeverityCritical && f.Category == review.CategorySecurity)
}

// Memory is a repository's dismissals and revivals, signed once and
// compared with each finding of a review.
type Memory struct {
	dismissals []signedDismissal
	revivals   []signedRevival
}

type signedDismissal struct {
	Dismissal
	sig Signature
	// revived: a writer revived a pattern similar to it after it was made.
	revived bool
}

type signedRevival struct {
	Revival
	sig Signature
}

// New signs the dismissals and revivals (the store bounds how many).
func New(dismissals []Dismissal, revivals []Revival) *Memory {
	m := &Memory{dismissals: make([]signedDismissal, len(dismissals)), revivals: make([]signedRevival, len(revivals))}
	for i, r := range revivals {
		m.revivals[i] = signedRevival{Revival: r, sig: Sign(r.Finding)}
	}
	for i, d := range dismissals {
		s := signedDismissal{Dismissal: d, sig: Sign(d.Finding)}
		for _, r := range m.revivals {
			if r.At.After(d.At) && Similarity(r.sig, s.sig) >= Threshold {
				s.revived = true
				break
			}
		}
		m.dismissals[i] = s
	}
	return m
}

// Len is how many dismissals the memory holds.
func (m *Memory) Len() int {
	if m == nil {
		return 0
	}
	return len(m.dismissals)
}

// Matches returns the dismissals similar to f, most similar first, but
// those a later revival cancels: one of a pattern similar to f (every
// dismissal made before it) or to the dismissal.
func (m *Memory) Matches(f review.Finding) []Match {
	if m == nil || len(m.dismissals) == 0 {
		return nil
	}
	sig := Sign(f)
	var revivedAt time.Time
	for _, r := range m.revivals {
		if r.At.After(revivedAt) && Similarity(r.sig, sig) >= Threshold {
			revivedAt = r.At
		}
	}
	var out []Match
	for _, d := range m.dismissals {
		if d.revived || !d.At.After(revivedAt) {
			continue
		}
		if s := Similarity(sig, d.sig); s >= Threshold {
			out = append(out, Match{PRNumber: d.PRNumber, Fingerprint: d.Fingerprint, CommentID: d.CommentID,
				By: d.By, How: d.How, Similarity: s})
		}
	}
	slices.SortStableFunc(out, func(a, b Match) int { return cmp.Compare(b.Similarity, a.Similarity) })
	return out
}

// Suppress returns findings without those similar to at least n
// dismissals, and those it left out with the dismissals they matched. A
// finding that is Never suppressed is kept however many it matches; n < 1
// (the memory turned off) and a nil memory suppress nothing.
func (m *Memory) Suppress(findings []review.Finding, n int) (kept []review.Finding, suppressed []Suppressed) {
	if n < 1 || m.Len() == 0 {
		return findings, nil
	}
	kept = make([]review.Finding, 0, len(findings))
	for _, f := range findings {
		if matches := m.Matches(f); len(matches) >= n && !Never(f) {
			suppressed = append(suppressed, Suppressed{Finding: f, Matches: matches})
			continue
		}
		kept = append(kept, f)
	}
	return kept, suppressed
}

// Note is what the review body's notes say of the suppressed findings, ""
// for none.
func Note(suppressed int) string {
	switch suppressed {
	case 0:
		return ""
	case 1:
		return "1 finding not posted: similar to findings this repository's writers dismissed (see MergeGuard's page of this pull request)."
	}
	return fmt.Sprintf("%d findings not posted: similar to findings this repository's writers dismissed (see MergeGuard's page of this pull request).", suppressed)
}
