package web

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/server/store"
)

// hunkContext is how many diff lines are shown around a finding's cited
// lines.
const hunkContext = 3

// maxSuggestionLines caps the added lines of a suggestion's diff.
const maxSuggestionLines = 200

// CodeRow is one line of code shown with a finding: its old and new line
// numbers (0 when the line has none), its kind ("add", "del", "ctx") and
// whether the finding cites it.
type CodeRow struct {
	Old, New int
	Kind     string
	Text     string
	Cited    bool
}

// CitedFinding is a finding as the review page shows it: in its hunk, with
// its suggestion as a diff against the cited lines.
type CitedFinding struct {
	review.Finding
	// Lines is "12" or "12–14"; Status the verification status as words.
	Lines, Status string
	// Section is the hunk's header text (often a function name).
	Section string
	// Code is the hunk around the cited lines (a diff run), or the cited
	// lines alone from the finding's snippet (HeadOnly: a pull request
	// run, whose diff is not stored).
	Code     []CodeRow
	HeadOnly bool
	// Suggestion is the suggestion as a diff: the cited lines removed, the
	// suggestion's lines added. Empty when there is no suggestion or no
	// cited code to set it against (SuggestionText is then shown).
	Suggestion     []CodeRow
	SuggestionText string
	// GitHubLine links the cited lines at the reviewed head on GitHub;
	// PRPage is the UI's page of the pull request (its finding ledger).
	GitHubLine, PRPage string
	// Prose is the description in paragraphs, its addresses into the
	// pull request's repository linked (see prose).
	Prose [][]Span
}

// findingSet is the findings of a finished run as the page shows them.
type findingSet struct {
	Findings, FalsePositives []CitedFinding
	// DiffNote says why the code is not shown in its diff, "" when it is.
	DiffNote string
}

// findingViews renders the findings of run's verdict, nil when it has none.
func (u *UI) citedFindings(run store.Run) *findingSet {
	if run.Result == nil {
		return nil
	}
	var files map[string]*diff.File
	set := &findingSet{}
	switch {
	case run.DiffText != nil:
		d, err := diff.ParseString(*run.DiffText)
		if err == nil {
			files = make(map[string]*diff.File, len(d.Files))
			for _, f := range d.Files {
				files[f.Path()] = f
			}
		} else {
			set.DiffNote = "The stored diff could not be read again; the code is shown from the findings."
		}
	default:
		set.DiffNote = "The diff of a pull request run is not stored: the cited lines are shown as the code at the reviewed head."
	}
	for _, f := range run.Result.Findings() {
		set.Findings = append(set.Findings, u.citedFinding(run, files, f))
	}
	for _, f := range run.Result.FalsePositives {
		set.FalsePositives = append(set.FalsePositives, u.citedFinding(run, files, f))
	}
	return set
}

func (u *UI) citedFinding(run store.Run, files map[string]*diff.File, f review.Finding) CitedFinding {
	v := CitedFinding{Finding: f, Lines: lineRange(f), Status: strings.ReplaceAll(string(f.VerificationStatus), "_", " ")}
	pullURL := ""
	if run.Mode == store.ModePR && run.Repository != "" && run.PRNumber > 0 {
		pullURL = u.githubPull(run.Repository, run.PRNumber)
	}
	v.Prose = prose(f.Description, pullURL)
	if file, ok := files[f.FilePath]; ok {
		v.Code, v.Section = hunkRows(file, f)
	}
	if len(v.Code) == 0 && f.CodeSnippet != "" && f.LineStart > 0 {
		v.Code, v.HeadOnly = snippetRows(f), true
	}
	// A built-in analyzer's suggestion is advice in words, not code.
	if !strings.HasPrefix(f.Agent, review.AnalyzerPrefix) {
		v.Suggestion = suggestionRows(v.Code, f.Suggestion)
	}
	if len(v.Suggestion) == 0 {
		v.SuggestionText = f.Suggestion
	}
	if run.Mode == store.ModePR && run.Repository != "" && run.HeadSHA != "" && f.LineStart > 0 && f.Side != review.SideLeft {
		v.GitHubLine = u.githubBlob(run.Repository, run.HeadSHA, f)
	}
	if run.Mode == store.ModePR && run.Repository != "" && run.PRNumber > 0 {
		v.PRPage = pullPage(run.Repository, run.PRNumber)
	}
	return v
}

// lineRange is a finding's lines as "12" or "12–14".
func lineRange(f review.Finding) string {
	if f.LineEnd > f.LineStart {
		return fmt.Sprintf("%d–%d", f.LineStart, f.LineEnd)
	}
	return fmt.Sprint(f.LineStart)
}

// hunkRows returns the rows of the hunk of file holding f's cited lines,
// hunkContext rows either side of them, and the hunk's section header.
func hunkRows(file *diff.File, f review.Finding) ([]CodeRow, string) {
	start, end := f.LineStart, max(f.LineEnd, f.LineStart)
	if start < 1 {
		return nil, ""
	}
	for _, h := range file.Hunks {
		first, last := -1, -1
		for i, l := range h.Lines {
			num := int(l.NewLine)
			if f.Side == review.SideLeft {
				num = int(l.OldLine)
			}
			if num >= start && num <= end && num != 0 {
				if first < 0 {
					first = i
				}
				last = i
			}
		}
		if first < 0 {
			continue
		}
		var rows []CodeRow
		for i := max(0, first-hunkContext); i <= min(len(h.Lines)-1, last+hunkContext); i++ {
			l := h.Lines[i]
			num := l.NewLine
			if f.Side == review.SideLeft {
				num = l.OldLine
			}
			rows = append(rows, CodeRow{Old: int(l.OldLine), New: int(l.NewLine), Kind: kindName(l.Kind), Text: l.Text,
				Cited: i >= first && i <= last && num != 0})
		}
		return rows, h.Section
	}
	return nil, ""
}

func kindName(k diff.LineKind) string {
	switch k {
	case diff.Add:
		return "add"
	case diff.Delete:
		return "del"
	}
	return "ctx"
}

// snippetRows returns f's code snippet as the cited lines, numbered from
// its first line on its side.
func snippetRows(f review.Finding) []CodeRow {
	lines := splitLines(f.CodeSnippet)
	rows := make([]CodeRow, len(lines))
	for i, text := range lines {
		rows[i] = CodeRow{New: f.LineStart + i, Kind: "ctx", Text: text, Cited: true}
		if f.Side == review.SideLeft {
			rows[i].Old, rows[i].New = rows[i].New, 0
		}
	}
	return rows
}

// suggestionRows returns suggestion as a diff against the cited rows of
// code: the cited lines removed, the suggestion's added. It is nil when
// there is no suggestion or no cited code.
func suggestionRows(code []CodeRow, suggestion string) []CodeRow {
	if strings.TrimSpace(suggestion) == "" {
		return nil
	}
	var rows []CodeRow
	for _, c := range code {
		if c.Cited {
			rows = append(rows, CodeRow{Old: c.Old, New: c.New, Kind: "del", Text: c.Text})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	added := splitLines(unfence(suggestion))
	if len(added) > maxSuggestionLines {
		added = append(added[:maxSuggestionLines], "…")
	}
	for _, text := range added {
		rows = append(rows, CodeRow{Kind: "add", Text: text})
	}
	return rows
}

// splitLines splits s into lines, without line endings or a final empty line.
func splitLines(s string) []string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	return strings.Split(strings.TrimRight(s, "\n"), "\n")
}

// unfence drops a markdown code fence wrapped around s.
func unfence(s string) string {
	lines := splitLines(s)
	if len(lines) >= 2 && strings.HasPrefix(strings.TrimSpace(lines[0]), "```") && strings.TrimSpace(lines[len(lines)-1]) == "```" {
		return strings.Join(lines[1:len(lines)-1], "\n")
	}
	return s
}

// githubBlob is the address of f's cited lines in repo at sha on GitHub.
func (u *UI) githubBlob(repo, sha string, f review.Finding) string {
	anchor := fmt.Sprintf("#L%d", f.LineStart)
	if f.LineEnd > f.LineStart {
		anchor += fmt.Sprintf("-L%d", f.LineEnd)
	}
	segs := strings.Split(f.FilePath, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.TrimRight(u.d.GitHubURL, "/") + "/" + repo + "/blob/" + url.PathEscape(sha) + "/" + strings.Join(segs, "/") + anchor
}
