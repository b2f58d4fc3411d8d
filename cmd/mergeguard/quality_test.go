package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// seedClosed records a merged pull request of repo whose model's warning
// was fixed and whose shellcheck info was dismissed by a command, reviewed
// by experiment arm arm ("" for a run from before arms were recorded)
// with prompt-v1, in took.
func seedClosed(t *testing.T, st *store.Store, repo string, n int, at time.Time, arm string, took time.Duration) {
	t.Helper()
	finding := func(fp string, sev review.Severity, agent string) review.Finding {
		return review.Finding{FilePath: "a.go", LineStart: 1, LineEnd: 1, Side: review.SideRight, Severity: sev,
			Category: review.CategoryBug, Title: fp, VerificationStatus: review.Verified, Fingerprint: fp, Agent: agent}
	}
	prompt := ""
	if arm != "" {
		prompt = "prompt-v1"
	}
	storetest.Closed(t, st, storetest.PR{Repository: repo, Number: n, Model: "gpt-4o", Cost: 0.5, Merged: true, At: at,
		Arm: arm, PromptVersion: prompt, Took: took,
		Ledger: []review.LedgerEntry{
			{Finding: finding("fp-a", review.SeverityWarning, "bugs"), State: review.FindingFixed, FirstSeenSHA: "h1", LastSeenSHA: "h2", FixedSHA: "h2"},
			{Finding: finding("fp-b", review.SeverityInfo, "analyzer:shellcheck"), State: review.FindingDismissed, StateHow: review.DismissedCommand,
				StateBy: "alice", FirstSeenSHA: "h1", LastSeenSHA: "h1"},
		}})
}

// TestQualityCommand: the report of DATABASE_URL as a table, CSV and the
// API's JSON.
func TestQualityCommand(t *testing.T) {
	t.Parallel()
	dbURL := storetest.URL(t)
	st, err := store.Open(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	at := time.Date(2026, 11, 3, 12, 0, 0, 0, time.UTC) // ISO week 2026-W45
	seedClosed(t, st, "acme/shop", 1, at, "", 40*time.Second)
	seedClosed(t, st, "acme/other", 2, at, "big", 90*time.Second)
	getenv := env(map[string]string{"DATABASE_URL": dbURL})
	since := at.Add(-24 * time.Hour).Format(time.DateOnly)

	csv, stderr, err := runCmd(t, getenv, "quality", "--repo", "acme/shop", "--since", since, "--format", "csv")
	if err != nil {
		t.Fatalf("quality --format csv: %v\n%s", err, stderr)
	}
	// 1 of 2 addressed: Wilson 95% [0.0945, 0.9055].
	// The arm's columns are filled on its rows only.
	want := `dimension,key,addressed,dismissed,unaddressed,n,rate,low,high,merged_pull_requests,findings_per_pr,cost_per_pr,runs,median_run_seconds
all,,1,1,0,2,0.5000,0.0945,0.9055,,,,,
repository,acme/shop,1,1,0,2,0.5000,0.0945,0.9055,,,,,
severity,info,0,1,0,1,0.0000,0.0000,0.7935,,,,,
severity,warning,1,0,0,1,1.0000,0.2065,1.0000,,,,,
category,bug,1,1,0,2,0.5000,0.0945,0.9055,,,,,
source,analyzer:shellcheck,0,1,0,1,0.0000,0.0000,0.7935,,,,,
source,gpt-4o,1,0,0,1,1.0000,0.2065,1.0000,,,,,
week,2026-W45,1,1,0,2,0.5000,0.0945,0.9055,,,,,
arm,default,1,1,0,2,0.5000,0.0945,0.9055,1,2.0000,0.5000,1,40.0
`
	if diff := cmp.Diff(want, csv); diff != "" {
		t.Errorf("csv (-want +got):\n%s", diff)
	}

	table, stderr, err := runCmd(t, getenv, "quality", "--since", since)
	if err != nil {
		t.Fatalf("quality: %v\n%s", err, stderr)
	}
	wantTable := `Quality of every repository since ` + since + ` (docs/quality.md)
Merged pull requests: 2, closed unmerged: 0
Addressed rate: 50.0% (2 of 4), 95% interval 15.0%-85.0%
Findings per merged pull request: 2.00, cost per merged pull request: $0.5000
Merged pull requests with an addressed finding: 100.0%
Dismissed: command 2
Abandoned (closed unmerged): 0

BY          KEY                  ADDRESSED  DISMISSED  UNADDRESSED  N  RATE    95% INTERVAL
repository  acme/other           1          1          0            2  50.0%   9.5%-90.5%
repository  acme/shop            1          1          0            2  50.0%   9.5%-90.5%
severity    info                 0          2          0            2  0.0%    0.0%-65.8%
severity    warning              2          0          0            2  100.0%  34.2%-100.0%
category    bug                  2          2          0            4  50.0%   15.0%-85.0%
source      analyzer:shellcheck  0          2          0            2  0.0%    0.0%-65.8%
source      gpt-4o               1          0          0            1  100.0%  20.7%-100.0%
source      gpt-4o@prompt-v1     1          0          0            1  100.0%  20.7%-100.0%
week        2026-W45             2          2          0            4  50.0%   15.0%-85.0%

Arms compared (llm.experiments; docs/quality.md, Choosing a model):
ARM      MERGED PRS  ADDRESSED  DISMISSED  UNADDRESSED  N  RATE   95% INTERVAL  FINDINGS/PR  COST/PR  RUNS  MEDIAN RUN
big      1           1          1          0            2  50.0%  9.5%-90.5%    2.00         $0.5000  1     1m30s
default  1           1          1          0            2  50.0%  9.5%-90.5%    2.00         $0.5000  1     40s
`
	if diff := cmp.Diff(wantTable, table); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}

	out, stderr, err := runCmd(t, getenv, "quality", "--repo", "acme/other", "--since", since, "--format", "json")
	if err != nil {
		t.Fatalf("quality --format json: %v\n%s", err, stderr)
	}
	var got struct {
		Repository string `json:"repository"`
		Rate       struct {
			N int `json:"n"`
		} `json:"addressed_rate"`
		Merged int `json:"merged_pull_requests"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if got.Repository != "acme/other" || got.Rate.N != 2 || got.Merged != 1 {
		t.Errorf("json: %+v, want acme/other, 2 findings, 1 merged pull request\n%s", got, out)
	}
}

func TestQualityUsage(t *testing.T) {
	t.Parallel()
	checkUsageErrors(t, []usageErrorCase{
		{"a bad repository", []string{"quality", "--repo", "o/r/x"}, `quality: --repo must be owner/name, got "o/r/x"`, 2},
		{"a bad format", []string{"quality", "--format", "xml"}, `quality: unknown format "xml" (want table, json or csv)`, 2},
		{"a bad window", []string{"quality", "--since", "last week"}, `quality: since "last week" is not a date (2006-01-02) or an RFC 3339 time`, 2},
		{"an argument", []string{"quality", "x"}, `quality: unexpected argument "x"`, 2},
		{"no database", []string{"quality"}, "quality: invalid configuration:\ndatabase.url: required by this command (set DATABASE_URL)", 1},
	})
}
