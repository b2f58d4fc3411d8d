package pipeline

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/review/source/difftext"
	"github.com/mergeguard/mergeguard/review/task"
)

// TestPromptVariantsAreConfigs: the prompt variants the pipeline has are
// exactly those config.Validate accepts, each with its own version and a
// prompt that differs from the default.
func TestPromptVariantsAreConfigs(t *testing.T) {
	t.Parallel()
	def, ok := promptVariantOf("")
	if !ok || def.version != PromptVersion {
		t.Fatalf("default prompt = %q, %v", def.version, ok)
	}
	versions := map[string]bool{def.version: true}
	for _, name := range config.PromptVariantNames() {
		v, ok := promptVariantOf(name)
		switch {
		case !ok:
			t.Errorf("config accepts prompt variant %q, which the pipeline does not have", name)
		case versions[v.version]:
			t.Errorf("prompt variant %q: version %q is another prompt's", name, v.version)
		case v.system == def.system:
			t.Errorf("prompt variant %q is the default prompt", name)
		}
		versions[v.version] = true
	}
	if _, ok := promptVariantOf("louder"); ok {
		t.Error(`promptVariantOf("louder") found a variant config does not accept`)
	}
}

// TestRunUsesArm: a run of an experiment arm asks the arm's model, with
// the arm's prompt variant, in every request; the result names the arm,
// its model and prompt version, and its model's findings' source carries
// both (review.FindingSource). An arm that is not configured fails the run.
func TestRunUsesArm(t *testing.T) {
	t.Parallel()
	cfg := testLLM(func(c *config.LLM) {
		c.Model = "gpt-4o-mini"
		c.Experiments = []config.Experiment{
			{Name: "big", Model: "gpt-4o", Share: 0.3},
			{Name: "terse", Model: "gpt-4.1", Prompt: "focused", Share: 0.2},
		}
	})
	tests := []struct {
		arm, wantArm, model, version string
		focused                      bool
	}{
		{"", config.DefaultArm, "gpt-4o-mini", "prompt-v1", false},
		{config.DefaultArm, config.DefaultArm, "gpt-4o-mini", "prompt-v1", false},
		{"big", "big", "gpt-4o", "prompt-v1", false},
		{"terse", "terse", "gpt-4.1", "focused-v1", true},
	}
	for _, tt := range tests {
		t.Run(tt.wantArm+"/"+tt.arm, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.New(t, func(llmtest.Request) llmtest.Response { return answer(sqli) })
			client := llm.New(llm.Config{BaseURL: srv.URL(), Model: cfg.Model}, nil)
			src, err := difftext.New(readTestdata(t, "golden-input.diff"))
			if err != nil {
				t.Fatal(err)
			}
			res, err := newTest(Deps{Config: cfg, LLM: client}).Run(t.Context(), task.Request{Source: src, Repo: config.DefaultRepo(), Arm: tt.arm})
			if err != nil {
				t.Fatal(err)
			}
			if srv.Calls() == 0 {
				t.Fatal("the model was not asked")
			}
			for i, r := range srv.Requests() {
				if r.Model != tt.model {
					t.Errorf("request %d asked model %q, want %q", i, r.Model, tt.model)
				}
				if system := r.Messages[0].Content; strings.Contains(system, focusedFocus) != tt.focused {
					t.Errorf("request %d: focused prompt = %v, want %v", i, !tt.focused, tt.focused)
				}
			}
			if diff := cmp.Diff([3]string{tt.wantArm, tt.model, tt.version}, [3]string{res.Arm, res.Model, res.PromptVersion}); diff != "" {
				t.Errorf("arm, model, prompt version (-want +got):\n%s", diff)
			}
			i := slices.IndexFunc(res.Findings, func(f review.Finding) bool { return f.Title == sqli.Title })
			if i < 0 {
				t.Fatalf("no model finding in %v", res.Findings)
			}
			if got, want := review.FindingSource(res.Findings[i], res.Model, res.PromptVersion), tt.model+"@"+tt.version; got != want {
				t.Errorf("source = %q, want %q", got, want)
			}
		})
	}
	t.Run("not configured", func(t *testing.T) {
		t.Parallel()
		src, err := difftext.New(readTestdata(t, "golden-input.diff"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = newTest(Deps{Config: cfg}).Run(t.Context(), task.Request{Source: src, Repo: config.DefaultRepo(), Arm: "gone"})
		if err == nil || !strings.Contains(err.Error(), `arm "gone" is not configured`) {
			t.Errorf("Run of an arm not configured: %v", err)
		}
	})
}
