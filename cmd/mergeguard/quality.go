package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review/quality"
	"github.com/mergeguard/mergeguard/server/api"
	"github.com/mergeguard/mergeguard/server/store"
)

// qualityFormats are the output formats of `mergeguard quality`.
var qualityFormats = map[string]func(io.Writer, api.QualityResponse) error{
	"table": writeQualityTable,
	"json":  writeQualityJSON,
	"csv":   writeQualityCSV,
}

// runQuality is `mergeguard quality [--repo owner/name] [--since DATE]
// [--format table|json|csv]`: the quality report GET /api/quality answers,
// read from the database like `learnings export`.
func runQuality(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("quality", stderr)
	configPath := configFlag(fs)
	repoFlag := fs.String("repo", "", "the `repository` (owner/name) to report on; every repository when unset")
	sinceFlag := fs.String("since", "", "the start of the window: a `date` (2006-01-02) or an RFC 3339 time; 90 days back when unset")
	format := fs.String("format", "table", "output `format`: table, json or csv")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Errorf("quality: unexpected argument %q", rest[0])}
	}
	repo := ""
	if *repoFlag != "" {
		owner, name, _ := strings.Cut(*repoFlag, "/")
		if repo, err = api.ParseRepoPath(owner, name); err != nil {
			return usageError{fmt.Errorf("quality: --repo must be owner/name, got %q", *repoFlag)}
		}
	}
	write, ok := qualityFormats[*format]
	if !ok {
		return usageError{fmt.Errorf("quality: unknown format %q (want table, json or csv)", *format)}
	}
	since, err := api.ParseSince(*sinceFlag, time.Now())
	if err != nil {
		return usageError{fmt.Errorf("quality: %w", err)}
	}
	cfg, err := loadConfig(*configPath, getenv, config.RequireDatabase)
	if err != nil {
		return fmt.Errorf("quality: %w", err)
	}
	st, err := store.Open(ctx, cfg.Database.URL.Value())
	if err != nil {
		return fmt.Errorf("quality: %w", err)
	}
	defer st.Close()
	rep, err := api.Quality(ctx, st, repo, since)
	if err != nil {
		return fmt.Errorf("quality: %w", err)
	}
	return write(stdout, rep)
}

func writeQualityJSON(w io.Writer, rep api.QualityResponse) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// dimension is one breakdown of a report, by name.
type dimension struct {
	name   string
	groups []quality.Group
}

func dimensions(rep api.QualityResponse) []dimension {
	return []dimension{{"repository", rep.ByRepository}, {"severity", rep.BySeverity}, {"category", rep.ByCategory},
		{"source", rep.BySource}, {"week", rep.ByWeek}}
}

func writeQualityCSV(w io.Writer, rep api.QualityResponse) error {
	cw := csv.NewWriter(w)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
	row := func(dim, key string, r quality.Rate) []string {
		return []string{dim, key, strconv.Itoa(r.Addressed), strconv.Itoa(r.Dismissed), strconv.Itoa(r.Unaddressed),
			strconv.Itoa(r.N), f(r.Rate), f(r.Low), f(r.High)}
	}
	// The arms' own columns follow, empty on the other rows.
	none := []string{"", "", "", "", ""}
	rows := [][]string{{"dimension", "key", "addressed", "dismissed", "unaddressed", "n", "rate", "low", "high",
		"merged_pull_requests", "findings_per_pr", "cost_per_pr", "runs", "median_run_seconds"},
		append(row("all", "", rep.AddressedRate), none...)}
	for _, d := range dimensions(rep) {
		for _, g := range d.groups {
			rows = append(rows, append(row(d.name, g.Key, g.Rate), none...))
		}
	}
	for _, a := range rep.ByArm {
		rows = append(rows, append(row("arm", a.Name, a.AddressedRate), strconv.Itoa(a.MergedPullRequests),
			f(a.FindingsPerPR), f(a.CostPerPR), strconv.Itoa(a.Runs), strconv.FormatFloat(a.MedianRunSeconds, 'f', 1, 64)))
	}
	if err := cw.WriteAll(rows); err != nil {
		return fmt.Errorf("quality: %w", err)
	}
	return nil
}

func writeQualityTable(w io.Writer, rep api.QualityResponse) error {
	pct := func(v float64) string { return strconv.FormatFloat(100*v, 'f', 1, 64) + "%" }
	what := "every repository"
	if rep.Repository != "" {
		what = rep.Repository
	}
	r := rep.AddressedRate
	how := make([]string, 0, len(rep.DismissedHow))
	for _, k := range slices.Sorted(maps.Keys(rep.DismissedHow)) {
		how = append(how, fmt.Sprintf("%s %d", k, rep.DismissedHow[k]))
	}
	fmt.Fprintf(w, "Quality of %s since %s (docs/quality.md)\n", what, rep.Since.Format(time.DateOnly))
	if rep.Truncated {
		fmt.Fprintf(w, "Only the oldest %d findings of the window are counted.\n", store.MaxQualityFindings)
	}
	fmt.Fprintf(w, "Merged pull requests: %d, closed unmerged: %d\n", rep.Merged, rep.ClosedUnmerged)
	fmt.Fprintf(w, "Addressed rate: %s (%d of %d), 95%% interval %s-%s\n", pct(r.Rate), r.Addressed, r.N, pct(r.Low), pct(r.High))
	fmt.Fprintf(w, "Findings per merged pull request: %.2f, cost per merged pull request: $%.4f\n", rep.FindingsPerPR, rep.CostPerPR)
	fmt.Fprintf(w, "Merged pull requests with an addressed finding: %s\n", pct(rep.WithAddressed))
	fmt.Fprintf(w, "Dismissed: %s\nAbandoned (closed unmerged): %d\n\n", cmpOr(strings.Join(how, ", "), "none"), rep.Abandoned)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BY\tKEY\tADDRESSED\tDISMISSED\tUNADDRESSED\tN\tRATE\t95% INTERVAL")
	for _, d := range dimensions(rep) {
		for _, g := range d.groups {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s-%s\n", d.name, g.Key, g.Addressed, g.Dismissed, g.Unaddressed, g.N,
				pct(g.Rate.Rate), pct(g.Low), pct(g.High))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeArmsTable(w, rep.ByArm, pct)
}

// writeArmsTable writes the arms compared, when a report has two or more
// (docs/quality.md, Choosing a model).
func writeArmsTable(w io.Writer, arms []quality.Arm, pct func(float64) string) error {
	if len(arms) < 2 {
		return nil
	}
	fmt.Fprintln(w, "\nArms compared (llm.experiments; docs/quality.md, Choosing a model):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ARM\tMERGED PRS\tADDRESSED\tDISMISSED\tUNADDRESSED\tN\tRATE\t95% INTERVAL\tFINDINGS/PR\tCOST/PR\tRUNS\tMEDIAN RUN")
	for _, a := range arms {
		r, median := a.AddressedRate, "-"
		if a.Runs > 0 {
			median = time.Duration(a.MedianRunSeconds * float64(time.Second)).Round(time.Second).String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s-%s\t%.2f\t$%.4f\t%d\t%s\n", a.Name, a.MergedPullRequests,
			r.Addressed, r.Dismissed, r.Unaddressed, r.N, pct(r.Rate), pct(r.Low), pct(r.High), a.FindingsPerPR, a.CostPerPR, a.Runs, median)
	}
	return tw.Flush()
}

// cmpOr is s, or or when s is empty.
func cmpOr(s, or string) string {
	if s == "" {
		return or
	}
	return s
}
