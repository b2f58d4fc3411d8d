package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/mergeguard/mergeguard/github/githubtest"
)

// actionMeta is the part of action.yml the tests read.
type actionMeta struct {
	Inputs map[string]struct {
		Description string `yaml:"description"`
	} `yaml:"inputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			ID  string            `yaml:"id"`
			Run string            `yaml:"run"`
			Env map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

// TestActionMetadata: action.yml's expressions name declared inputs, every
// input is described and reaches the review script, and the script reads
// only the inputs it is given.
func TestActionMetadata(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var meta actionMeta
	if err := yaml.Unmarshal(raw, &meta); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if meta.Runs.Using != "composite" {
		t.Errorf("runs.using = %q, want composite", meta.Runs.Using)
	}
	for _, m := range regexp.MustCompile(`inputs\.([a-z-]+)`).FindAllStringSubmatch(string(raw), -1) {
		if _, ok := meta.Inputs[m[1]]; !ok {
			t.Errorf("action.yml uses inputs.%s, which it does not declare", m[1])
		}
	}
	mapped := map[string]bool{}
	for _, s := range meta.Runs.Steps {
		if s.ID != "review" {
			continue
		}
		for k, v := range s.Env {
			if m := regexp.MustCompile(`^\$\{\{ inputs\.([a-z-]+) \}\}$`).FindStringSubmatch(v); m != nil {
				mapped[m[1]] = true
				if want := "INPUT_" + strings.ToUpper(strings.ReplaceAll(m[1], "-", "_")); k != want {
					t.Errorf("input %s reaches the script as %s, want %s", m[1], k, want)
				}
			}
		}
	}
	script, err := os.ReadFile(filepath.Join("..", "scripts", "action-review.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range meta.Inputs {
		if in.Description == "" {
			t.Errorf("input %s has no description", name)
		}
		if name != "upload-sarif" && !mapped[name] {
			t.Errorf("input %s does not reach the review script", name)
		}
	}
	for _, m := range regexp.MustCompile(`INPUT_([A-Z_]+)`).FindAllStringSubmatch(string(script), -1) {
		if !mapped[strings.ToLower(strings.ReplaceAll(m[1], "_", "-"))] {
			t.Errorf("the script reads INPUT_%s, which action.yml does not set", m[1])
		}
	}
}

// TestActionReviewStep runs the action's review step as Actions would on
// a pull_request event, against a fake GitHub and without a model: the
// SARIF report holds the AWS key the pull request commits, the review is
// posted once, and the exit code follows fail-level.
func TestActionReviewStep(t *testing.T) {
	t.Parallel()
	fake := githubtest.New(t)
	fake.RequireAuth()
	fake.AddToken("ghp-test")
	fake.SetBot(githubtest.User{Login: "github-actions[bot]", ID: 41898282, Type: "Bot"})
	keys := "package cloud\n\nconst key = \"AKIAZ7VRSQ5TJN2XMY4W\"\n"
	fake.AddPR(githubtest.PR{Owner: "acme", Repo: "widgets", Number: 7,
		Base: map[string]string{"main.go": "package main\n"},
		Head: map[string]string{"main.go": "package main\n", "cloud/keys.go": keys},
		Diff: fmt.Sprintf("diff --git a/cloud/keys.go b/cloud/keys.go\nnew file mode 100644\nindex 0000000..%s\n--- /dev/null\n+++ b/cloud/keys.go\n@@ -0,0 +1,3 @@\n+%s\n",
			githubtest.BlobSHA(keys)[:7], strings.Join(strings.Split(strings.TrimSuffix(keys, "\n"), "\n"), "\n+"))})
	bin := buildBinary(t)
	tests := []struct {
		name   string
		inputs map[string]string
		code   string
		posted int
		check  func(t *testing.T, report []byte)
	}{
		{"sarif, post, fail on critical", map[string]string{"INPUT_FORMAT": "sarif", "INPUT_FAIL_LEVEL": "critical", "INPUT_POST": "true"}, "1", 1,
			func(t *testing.T, report []byte) {
				var s struct {
					Runs []struct {
						Results []struct {
							Message struct{ Text string } `json:"message"`
						} `json:"results"`
					} `json:"runs"`
				}
				if err := json.Unmarshal(report, &s); err != nil || len(s.Runs) != 1 || len(s.Runs[0].Results) != 1 ||
					!strings.Contains(s.Runs[0].Results[0].Message.Text, "aws-access-token") {
					t.Errorf("SARIF report (%v): %s", err, report)
				}
			}},
		{"json, no post, no fail level", map[string]string{"INPUT_FORMAT": "json", "INPUT_FAIL_LEVEL": "none", "INPUT_POST": "false"}, "0", 1,
			func(t *testing.T, report []byte) {
				var v struct{ Verdict string }
				if err := json.Unmarshal(report, &v); err != nil || v.Verdict != "request_changes" {
					t.Errorf("JSON report (%v): verdict %q, want request_changes", err, v.Verdict)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			outputs := filepath.Join(tmp, "outputs")
			cmd := exec.CommandContext(t.Context(), "bash", filepath.Join("..", "scripts", "action-review.sh"))
			// The tests' build cache: a new HOME's empty one made go vet's
			// `go list -export std` rebuild the standard library in every
			// case (23 s for the test with it, 144 s without).
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "GOCACHE=" + goCache(t), "GITHUB_OUTPUT=" + outputs, "RUNNER_TEMP=" + tmp,
				"MERGEGUARD_BIN=" + bin, "INPUT_GITHUB_TOKEN=ghp-test", "GITHUB_REF=refs/pull/7/merge",
				"GITHUB_REPOSITORY=acme/widgets", "GITHUB_SERVER_URL=https://github.com",
				"GITHUB_API_URL=" + fake.URL(), "GITHUB_GRAPHQL_URL=" + fake.GraphQLURL()}
			for k, v := range tt.inputs {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("the review step failed (it never should: action.yml's last step fails the job): %v\n%s", err, out)
			}
			got := readOutputs(t, outputs)
			if got["exit-code"] != tt.code {
				t.Errorf("exit-code = %q, want %s", got["exit-code"], tt.code)
			}
			report, err := os.ReadFile(got["report"])
			if err != nil {
				t.Fatalf("report: %v", err)
			}
			tt.check(t, report)
			var states []string
			for _, rv := range fake.Reviews("acme", "widgets", 7) {
				states = append(states, rv.User.Login+" "+rv.State)
			}
			if diff := cmp.Diff(slices.Repeat([]string{"github-actions[bot] CHANGES_REQUESTED"}, tt.posted), states); diff != "" {
				t.Errorf("reviews on the pull request (-want +got):\n%s", diff)
			}
		})
	}
}

// readOutputs reads a step's GITHUB_OUTPUT file of name=value lines.
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(l, "=")
		out[k] = v
	}
	return out
}
