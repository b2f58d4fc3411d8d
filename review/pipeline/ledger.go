package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/analyzer"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/memory"
	"github.com/mergeguard/mergeguard/review/task"
)

// This file carries a pull request's finding ledger over to the new head:
// which earlier findings are fixed, still open or gone with their file, and
// which of this review's findings people dismissed before.

// StateByMergeGuard is StateBy of the entries MergeGuard itself moved.
const StateByMergeGuard = "mergeguard"

// nearLines is how far from its expected place a finding's cited code may
// have moved and still be the same code.
const nearLines = 10

// carried is the outcome of carrying a ledger over to a new head.
type carried struct {
	ledger task.Ledger
	// reported are this review's findings without those people dismissed
	// before; counted are the findings the verdict counts (reported and the
	// earlier ones still open).
	reported, counted []review.Finding
	notes             []string
	// suppressed are the new findings the memory of dismissals kept out.
	suppressed []memory.Suppressed
}

// carry moves the ledger of h to head. touched says which files the review
// looked at (every file of an incremental review's since-diff, every file
// of the pull request for a full one); since is the since-diff of an
// incremental review, nil for a full one; d is the pull request's diff.
func (r *run) carry(ctx context.Context, h *task.History, head string, d, since *diff.Diff, touched map[string]bool, reported []review.Finding) carried {
	out := carried{reported: reported, counted: reported}
	if h == nil {
		return out
	}
	blocking := task.BlockingSeverity(r.req.Repo)
	byFP := make(map[string]review.LedgerEntry, len(h.Ledger))
	blockedBefore := false
	for _, e := range h.Ledger {
		byFP[e.Finding.Fingerprint] = e
		blockedBefore = blockedBefore || e.Blocking(blocking)
	}
	out.reported, out.notes = withoutDismissed(reported, byFP)
	out.reported, out.suppressed = suppress(h.Memory, out.reported, byFP, r.req.Repo.Memory.SuppressAfter)
	if note := memory.Note(len(out.suppressed)); note != "" {
		out.notes = append(out.notes, note)
	}
	out.counted = append([]review.Finding{}, out.reported...)
	seen := make(map[string]bool, len(out.reported))
	for _, f := range out.reported {
		seen[f.Fingerprint] = true
		e, ok := byFP[f.Fingerprint]
		earlier := ok && (e.State == review.FindingOpen || e.State == review.FindingExposed)
		if !earlier {
			e = review.LedgerEntry{FirstSeenSHA: head, CommentID: e.CommentID, ThreadID: e.ThreadID}
		}
		e.Finding, e.State, e.LastSeenSHA, e.FixedSHA, e.StateBy, e.StateHow = f, review.FindingOpen, head, "", "", ""
		if earlier {
			out.ledger.StillOpen = append(out.ledger.StillOpen, e)
		}
		out.ledger.Changed = append(out.ledger.Changed, e)
	}
	r.carryEarlier(ctx, h, head, d, since, touched, seen, &out)
	out.ledger.All = merged(h.Ledger, out.ledger.Changed)
	blockedAfter := false
	for _, e := range out.ledger.All {
		blockedAfter = blockedAfter || e.Blocking(blocking)
	}
	out.ledger.BlockingCleared = blockedBefore && !blockedAfter
	return out
}

// carryEarlier moves the earlier entries this review did not report to
// head: an analyzer's finding is fixed only when the analyzer reports it
// nowhere in the pull request's diff d, and a secret it stopped reporting
// is exposed, not fixed (it was pushed); a model's finding is fixed when
// its cited code is gone from the lines the review looked at again.
func (r *run) carryEarlier(ctx context.Context, h *task.History, head string, d, since *diff.Diff, touched, seen map[string]bool, out *carried) {
	inPR := make(map[string]bool, len(d.Files))
	for _, f := range d.Files {
		inPR[f.Path()] = true
	}
	files := newFileReader(r.req.Source)
	var still *stillReported
	for _, e := range h.Ledger {
		switch {
		case e.State == review.FindingDismissed:
			out.ledger.Dismissed = append(out.ledger.Dismissed, e)
			continue
		case e.State == review.FindingExposed && !seen[e.Finding.Fingerprint]:
			if e.Counts() {
				out.counted = append(out.counted, e.Finding)
			}
			continue
		case e.State != review.FindingOpen || seen[e.Finding.Fingerprint]:
			continue
		}
		e.LastSeenSHA = head
		looked := touched[e.Finding.FilePath] || !inPR[e.Finding.FilePath]
		if analyzer.IsAnalyzer(e.Finding) && looked && still == nil {
			still = r.analyzersOver(ctx, d)
		}
		switch {
		case isSecret(e.Finding) && looked && !still.reports(e.Finding):
			e.State, e.StateBy, e.StateHow = review.FindingExposed, StateByMergeGuard, exposedHow(r.req.Repo)
			out.ledger.Exposed = append(out.ledger.Exposed, e)
			if e.Counts() {
				out.counted = append(out.counted, e.Finding)
			}
		case !inPR[e.Finding.FilePath]:
			e.State, e.StateBy = review.FindingOutdated, StateByMergeGuard
		case touched[e.Finding.FilePath] && r.fixed(ctx, files, e.Finding, since, still):
			e.State, e.FixedSHA, e.StateBy = review.FindingFixed, head, StateByMergeGuard
			out.ledger.Fixed = append(out.ledger.Fixed, e)
		default:
			out.ledger.StillOpen = append(out.ledger.StillOpen, e)
			out.counted = append(out.counted, e.Finding)
		}
		out.ledger.Changed = append(out.ledger.Changed, e)
	}
}

// fixed reports whether an earlier finding in a file the review looked at
// is fixed: for an analyzer's, when the analyzer reports it nowhere in the
// pull request's diff; for a model's, when its cited code is gone.
func (r *run) fixed(ctx context.Context, files *fileReader, f review.Finding, since *diff.Diff, still *stillReported) bool {
	if analyzer.IsAnalyzer(f) {
		return !still.reports(f)
	}
	return r.gone(ctx, files, f, since)
}

// exposedHow is the StateHow of a secret found exposed under repo.
func exposedHow(repo config.Repo) string {
	if repo.Secrets.Removed == config.SecretsRemovedWarn {
		return review.ExposedWarning
	}
	return review.ExposedBlocking
}

// stillReported is what the built-in analyzers report over the whole
// pull request's diff, by analyzer and title (a finding's problem, wherever
// it now stands).
type stillReported struct{ problems map[string]bool }

// analyzersOver runs the built-in analyzers over every file of d. An
// analyzer that fails reports everything: its findings stay open.
func (r *run) analyzersOver(ctx context.Context, d *diff.Diff) *stillReported {
	s := &stillReported{problems: map[string]bool{}}
	analyzers := r.builtins()
	for i, got := range analyzer.Run(ctx, analyzers, d.Files) {
		name := analyzers[i].Name()
		if got.Err != nil {
			s.problems[name+"\x00*"] = true
		}
		for _, f := range got.Findings {
			s.problems[name+"\x00"+f.Title] = true
		}
	}
	return s
}

// reports says whether the analyzers still report f's problem.
func (s *stillReported) reports(f review.Finding) bool {
	return s.problems[f.Agent+"\x00"+f.Title] || s.problems[f.Agent+"\x00*"]
}

// merged is the ledger before with the changed entries in their place.
func merged(before, changed []review.LedgerEntry) []review.LedgerEntry {
	at := make(map[string]int, len(before))
	all := append([]review.LedgerEntry{}, before...)
	for i, e := range all {
		at[e.Finding.Fingerprint] = i
	}
	for _, e := range changed {
		if i, ok := at[e.Finding.Fingerprint]; ok {
			all[i] = e
			continue
		}
		all = append(all, e)
	}
	return all
}

// withoutDismissed drops the findings people dismissed earlier on the pull
// request: they are never reported, posted or counted again there.
func withoutDismissed(fs []review.Finding, byFP map[string]review.LedgerEntry) ([]review.Finding, []string) {
	kept := make([]review.Finding, 0, len(fs))
	for _, f := range fs {
		if e, ok := byFP[f.Fingerprint]; ok && e.State == review.FindingDismissed {
			continue
		}
		kept = append(kept, f)
	}
	if n := len(fs) - len(kept); n > 0 {
		return kept, []string{fmt.Sprintf("%d finding(s) people dismissed earlier on this pull request were not reported again.", n)}
	}
	return kept, nil
}

// suppress leaves out of fs the new findings similar to at least n of the
// dismissals m holds (memory.Suppress), keeping the order of the rest. A
// finding open (or exposed) on the pull request before stays: it was
// posted, and its thread is where people answer it.
func suppress(m *memory.Memory, fs []review.Finding, byFP map[string]review.LedgerEntry, n int) ([]review.Finding, []memory.Suppressed) {
	var fresh []review.Finding
	for _, f := range fs {
		if e, ok := byFP[f.Fingerprint]; !ok || (e.State != review.FindingOpen && e.State != review.FindingExposed) {
			fresh = append(fresh, f)
		}
	}
	_, suppressed := m.Suppress(fresh, n)
	if len(suppressed) == 0 {
		return fs, nil
	}
	left := make(map[string]bool, len(suppressed))
	for _, s := range suppressed {
		left[s.Finding.Fingerprint] = true
	}
	kept := make([]review.Finding, 0, len(fs)-len(suppressed))
	for _, f := range fs {
		if !left[f.Fingerprint] {
			kept = append(kept, f)
		}
	}
	return kept, suppressed
}

// gone reports whether a finding's cited code is no longer at (or near)
// its lines at the new head: the finding is fixed. A finding on removed
// lines, or whose code cannot be checked, is gone only when the new commits
// changed its lines; a file that cannot be read keeps its findings open.
func (r *run) gone(ctx context.Context, files *fileReader, f review.Finding, since *diff.Diff) bool {
	snippet := codeLines(f.CodeSnippet)
	sinceFile := fileOf(since, f.FilePath)
	if f.Side == review.SideLeft || len(snippet) == 0 || f.VerificationStatus != review.Verified {
		return sinceFile != nil && touchesOld(sinceFile, f.LineStart, f.LineEnd)
	}
	content, err := files.read(ctx, f.FilePath)
	if err != nil {
		return errors.Is(err, review.ErrNotFound)
	}
	expected := f.LineStart
	if sinceFile != nil {
		expected = mapLine(sinceFile, f.LineStart)
	}
	return !foundNear(codeLines(string(content)), snippet, expected)
}

// codeLines splits code into lines compared without their indentation and
// trailing space; blank lines are dropped.
func codeLines(s string) []string {
	var out []string
	for line := range strings.Lines(s) {
		if t := strings.TrimSpace(line); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// foundNear reports whether snippet's lines appear in order among the
// non-blank lines of a file near line expected (1-based, counted over all
// lines: the distance is approximate when blank lines intervene).
func foundNear(file, snippet []string, expected int) bool {
	lo, hi := max(expected-1-nearLines, 0), min(expected-1+nearLines, len(file)-len(snippet))
	for start := lo; start <= hi; start++ {
		match := true
		for i, s := range snippet {
			if file[start+i] != s {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// fileOf returns the file of d at path, nil when d is nil or has none.
func fileOf(d *diff.Diff, path string) *diff.File {
	if d == nil {
		return nil
	}
	for _, f := range d.Files {
		if f.Path() == path {
			return f
		}
	}
	return nil
}

// touchesOld reports whether a hunk of f changes old-side lines start..end.
func touchesOld(f *diff.File, start, end int) bool {
	for _, h := range f.Hunks {
		for _, l := range h.Lines {
			if l.Kind == diff.Delete && int(l.OldLine) >= start && int(l.OldLine) <= end {
				return true
			}
		}
		if h.OldLines == 0 && h.OldStart >= start && h.OldStart < end {
			return true // lines inserted inside the range
		}
	}
	return false
}

// mapLine maps a line of f's old side to where it stands on the new side.
func mapLine(f *diff.File, old int) int {
	shift := 0
	for _, h := range f.Hunks {
		if old < h.OldStart {
			break
		}
		if old < h.OldStart+h.OldLines {
			for _, l := range h.Lines {
				if int(l.OldLine) == old && l.NewLine > 0 {
					return int(l.NewLine)
				}
			}
			return h.NewStart
		}
		shift = h.NewStart + h.NewLines - (h.OldStart + h.OldLines)
	}
	return old + shift
}

// fileReader reads head files once each for one review.
type fileReader struct {
	src   review.Source
	cache map[string][]byte
}

func newFileReader(src review.Source) *fileReader {
	return &fileReader{src: src, cache: map[string][]byte{}}
}

func (fr *fileReader) read(ctx context.Context, path string) ([]byte, error) {
	if b, ok := fr.cache[path]; ok {
		return b, nil
	}
	b, err := fr.src.ReadFile(ctx, path, review.Head)
	if err != nil {
		return nil, err
	}
	fr.cache[path] = b
	return b, nil
}
