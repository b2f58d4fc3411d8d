package pipeline

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/source/difftext"
	"github.com/mergeguard/mergeguard/review/task"
)

// TestDotenvWithSecretRequestsChanges: a committed .env holding an AWS key
// gets the key's critical finding and the .env warning, and the verdict
// requests changes; the secret is not merged into the warning.
func TestDotenvWithSecretRequestsChanges(t *testing.T) {
	text := "diff --git a/.env b/.env\nnew file mode 100644\n--- /dev/null\n+++ b/.env\n@@ -0,0 +1,2 @@\n" +
		"+AWS_ACCESS_KEY_ID=AKIAZ7VRSQ5TJN2XMY4W\n+REGION=eu-west-1\n"
	analyzersFind(t, text, config.DefaultRepo(), []findingRow{
		{"Possible secret committed (aws-access-token)", review.SeverityCritical, review.Verified},
		{"Environment file committed", review.SeverityWarning, review.Likely},
	})
}

// findingRow is what a test checks of a reported finding.
type findingRow struct {
	Title    string
	Severity review.Severity
	Status   review.VerificationStatus
}

// analyzersFind reviews the diff text with the analyzers alone under repo
// and checks the reported findings and that the verdict requests changes.
func analyzersFind(t *testing.T, text string, repo config.Repo, want []findingRow) {
	t.Helper()
	src, err := difftext.New(text)
	if err != nil {
		t.Fatal(err)
	}
	res, err := newTest(Deps{Config: testLLM()}).Run(t.Context(), task.Request{Source: src, Repo: repo})
	if err != nil {
		t.Fatal(err)
	}
	var got []findingRow
	for _, f := range res.Verdict.Findings() {
		got = append(got, findingRow{f.Title, f.Severity, f.VerificationStatus})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if res.Verdict.Verdict != review.DecisionRequestChanges {
		t.Errorf("verdict = %s, want request_changes", res.Verdict.Verdict)
	}
}

// TestDedupe: duplicates merge into the better finding, which carries the
// highest severity; a secret is never swallowed by a finding that is not
// about a secret, and distinct secrets stay distinct.
func TestDedupe(t *testing.T) {
	at := func(agent string, start, end int, sev review.Severity, status review.VerificationStatus, fp string) review.Finding {
		return review.Finding{FilePath: "app/.env", LineStart: start, LineEnd: end, Side: review.SideRight,
			Category: review.CategorySecurity, Severity: sev, VerificationStatus: status, Agent: agent, Fingerprint: fp, Title: agent + " " + fp}
	}
	type kept struct {
		Title    string
		Severity review.Severity
	}
	tests := map[string]struct {
		in     []review.Finding
		want   []kept
		merged int
	}{
		"model duplicate merges, keeps the higher severity": {
			in: []review.Finding{
				at("reviewer:1", 3, 3, review.SeverityWarning, review.Verified, "a"),
				at("reviewer:2", 3, 4, review.SeverityCritical, review.Likely, "b"),
			},
			want: []kept{{"reviewer:1 a", review.SeverityCritical}}, merged: 1,
		},
		"secret is not swallowed by the env-file warning": {
			in: []review.Finding{
				at("analyzer:env-files", 1, 1, review.SeverityWarning, review.Likely, "a"),
				at("analyzer:secrets", 1, 1, review.SeverityCritical, review.Verified, "b"),
			},
			want: []kept{{"analyzer:env-files a", review.SeverityWarning}, {"analyzer:secrets b", review.SeverityCritical}},
		},
		"secret wins over a verified model finding on its line": {
			in: []review.Finding{
				at("reviewer:1", 1, 1, review.SeverityWarning, review.Verified, "a"),
				at("analyzer:secrets", 1, 1, review.SeverityWarning, review.Likely, "b"),
			},
			want: []kept{{"analyzer:secrets b", review.SeverityWarning}}, merged: 1,
		},
		"two secrets on one line stay distinct, same fingerprint or not": {
			in: []review.Finding{
				at("analyzer:secrets", 2, 2, review.SeverityCritical, review.Verified, "same"),
				at("analyzer:secrets", 2, 2, review.SeverityCritical, review.Verified, "same"),
				at("analyzer:secrets", 2, 3, review.SeverityWarning, review.Likely, "other"),
			},
			want: []kept{{"analyzer:secrets same", review.SeverityCritical}, {"analyzer:secrets same", review.SeverityCritical},
				{"analyzer:secrets other", review.SeverityWarning}},
		},
		"one PEM block seen by two secret detectors merges": {
			in: []review.Finding{
				at("analyzer:secrets", 1, 4, review.SeverityCritical, review.Verified, "a"),
				at("analyzer:private-keys", 1, 1, review.SeverityCritical, review.Verified, "b"),
			},
			want: []kept{{"analyzer:secrets a", review.SeverityCritical}}, merged: 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, merged := dedupe(tc.in)
			var got []kept
			for _, f := range out {
				got = append(got, kept{f.Title, f.Severity})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" || merged != tc.merged {
				t.Errorf("merged %d, want %d; kept (-want +got):\n%s", merged, tc.merged, diff)
			}
		})
	}
}
