package pipeline

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/task"
)

// TestSecretsRepoConfig: the secret scan reads the repository's
// .gitleaks.toml and .gitleaksignore from the base revision only (a pull
// request that adds an allowlist for its own key is still blocked, and
// told its change applies once merged), a bad configuration is a note and
// the default rules apply, and a secret in a test-fixture path is posted
// as a likely warning that never blocks, unless secrets.block_in_tests.
func TestSecretsRepoConfig(t *testing.T) {
	const key = "AKIAZ7VRSQ5TJN2XMY4W"
	line := `AWS_KEY = "` + key + `"`
	allowSamples := "[extend]\nuseDefault = true\n[allowlist]\npaths = ['''^samples/''']\n"
	block := config.DefaultRepo()
	block.Secrets.BlockInTests = true
	type secret struct {
		Path     string
		Severity review.Severity
		Status   review.VerificationStatus
	}
	tests := map[string]struct {
		diff        string
		base        map[string]string
		repo        config.Repo
		want        review.Decision
		wantSecrets []secret
		wantNote    string
	}{
		"no configuration": {diff: addedFileDiff("samples/cfg.py", line), repo: config.DefaultRepo(),
			want: review.DecisionRequestChanges, wantSecrets: []secret{{"samples/cfg.py", review.SeverityCritical, review.Verified}}},
		"base allowlist": {diff: addedFileDiff("samples/cfg.py", line), base: map[string]string{".gitleaks.toml": allowSamples},
			repo: config.DefaultRepo(), want: review.DecisionComment},
		"head allowlist is not honoured": {diff: addedFileDiff("samples/cfg.py", line) + addedFileDiff(".gitleaks.toml", strings.Split(strings.TrimSpace(allowSamples), "\n")...),
			repo: config.DefaultRepo(), want: review.DecisionRequestChanges,
			wantSecrets: []secret{{"samples/cfg.py", review.SeverityCritical, review.Verified}}, wantNote: "edits .gitleaks.toml"},
		"base fingerprint": {diff: addedFileDiff("cfg.py", line), base: map[string]string{".gitleaksignore": "cfg.py:aws-access-token:1\n"},
			repo: config.DefaultRepo(), want: review.DecisionComment},
		"head fingerprint is not honoured": {diff: addedFileDiff("cfg.py", line) + addedFileDiff(".gitleaksignore", "cfg.py:aws-access-token:1"),
			repo: config.DefaultRepo(), want: review.DecisionRequestChanges,
			wantSecrets: []secret{{"cfg.py", review.SeverityCritical, review.Verified}}, wantNote: "edits .gitleaksignore"},
		"bad base configuration": {diff: addedFileDiff("samples/cfg.py", line), base: map[string]string{".gitleaks.toml": "[[allowlists]]\npaths = ['''(''']\n"},
			repo: config.DefaultRepo(), want: review.DecisionRequestChanges,
			wantSecrets: []secret{{"samples/cfg.py", review.SeverityCritical, review.Verified}}, wantNote: "was not used"},
		"fixture path": {diff: addedFileDiff("pkg/testdata/cfg.py", line), repo: config.DefaultRepo(),
			want: review.DecisionComment, wantSecrets: []secret{{"pkg/testdata/cfg.py", review.SeverityWarning, review.Likely}}},
		"fixture path, block_in_tests": {diff: addedFileDiff("pkg/testdata/cfg.py", line), repo: block,
			want: review.DecisionRequestChanges, wantSecrets: []secret{{"pkg/testdata/cfg.py", review.SeverityCritical, review.Verified}}},
		"bare diff": {diff: addedFileDiff("cfg.py", line), base: nil, repo: config.DefaultRepo(),
			want: review.DecisionRequestChanges, wantSecrets: []secret{{"cfg.py", review.SeverityCritical, review.Verified}}},
		"key header alone": {diff: addedFileDiff("ssh.go", `const header = "-----BEGIN OPENSSH PRIVATE KEY-----"`), repo: config.DefaultRepo(),
			want: review.DecisionComment, wantSecrets: []secret{{"ssh.go", review.SeverityInfo, review.Likely}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src := &memSource{change: review.Change{Repository: "o/r", Number: 1, HeadSHA: "h1", BaseSHA: "b1"}, diff: tc.diff, base: tc.base}
			res, err := newTest(Deps{Config: testLLM()}).Run(t.Context(), task.Request{Source: src, Repo: tc.repo})
			if err != nil {
				t.Fatal(err)
			}
			var got []secret
			for _, f := range res.Findings {
				if isSecret(f) && f.VerificationStatus != review.FalsePositive {
					got = append(got, secret{f.FilePath, f.Severity, f.VerificationStatus})
				}
			}
			if diff := cmp.Diff(tc.wantSecrets, got); diff != "" {
				t.Errorf("secret findings (-want +got):\n%s", diff)
			}
			if res.Verdict.Verdict != tc.want {
				t.Errorf("verdict = %s (%s), want %s", res.Verdict.Verdict, res.Verdict.Summary, tc.want)
			}
			notes := strings.Join(res.Verdict.Notes, "\n")
			if tc.wantNote != "" && !strings.Contains(notes, tc.wantNote) {
				t.Errorf("notes %q do not say %q", notes, tc.wantNote)
			}
			if tc.wantNote == "" && strings.Contains(notes, "gitleaks") {
				t.Errorf("notes speak of gitleaks: %q", notes)
			}
			if strings.Contains(notes, key) {
				t.Errorf("notes repeat the key: %q", notes)
			}
		})
	}
}

// TestFixtureSecretNeverShutsTheGate: a secret in a test fixture, reported
// as a likely warning, keeps neither the verdict nor the gate shut once a
// later push removes it (exposed), whatever the blocking severity, while
// the same removal of a verified secret does.
func TestFixtureSecretNeverShutsTheGate(t *testing.T) {
	const path = "pkg/testdata/cfg.py"
	tests := map[string]struct {
		severity review.Severity
		status   review.VerificationStatus
		blocks   bool
	}{
		"fixture warning": {review.SeverityWarning, review.Likely, false},
		"live key":        {review.SeverityCritical, review.Verified, true},
	}
	for name, tc := range tests {
		for _, blocking := range []review.Severity{review.SeverityCritical, review.SeverityWarning} {
			t.Run(name+"/"+string(blocking), func(t *testing.T) {
				src := &memSource{change: review.Change{Repository: "o/r", Number: 1, HeadSHA: "h2"},
					head: map[string]string{path: "x = 1\n"}, diff: addedFileDiff(path, "x = 1")}
				d, err := diff.ParseString(src.diff)
				if err != nil {
					t.Fatal(err)
				}
				entry := review.LedgerEntry{State: review.FindingOpen, FirstSeenSHA: "h1", LastSeenSHA: "h1",
					Finding: review.Finding{FilePath: path, LineStart: 1, LineEnd: 1, Side: review.SideRight, Severity: tc.severity,
						Category: review.CategorySecurity, Title: "Possible secret committed (aws-access-token)", Agent: "analyzer:secrets",
						VerificationStatus: tc.status, Fingerprint: "key"}}
				r := &run{p: newTest(Deps{Config: testLLM()}), req: task.Request{Source: src, Repo: config.DefaultRepo()}}
				c := r.carry(t.Context(), &task.History{Ledger: []review.LedgerEntry{entry}}, "h2", d, d, touchedFiles(d, d), nil)
				got := c.ledger.All[0]
				if got.State != review.FindingExposed {
					t.Fatalf("state = %s, want exposed", got.State)
				}
				if b := got.Blocking(blocking); b != tc.blocks {
					t.Errorf("Blocking(%s) = %v, want %v", blocking, b, tc.blocks)
				}
				verdict, _ := decide(false, blocking, c.counted, false, false, 1, 0)
				if (verdict == review.DecisionRequestChanges) != tc.blocks {
					t.Errorf("verdict = %s, want blocking %v", verdict, tc.blocks)
				}
			})
		}
	}
}
