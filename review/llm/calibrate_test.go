package llm_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	openai "github.com/sashabaranov/go-openai"

	"github.com/mergeguard/mergeguard/review/budget"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
)

// sampleStore is a budget.CorrectionStore in memory that can fail.
type sampleStore struct {
	mu      sync.Mutex
	samples map[string][]budget.Sample
	err     error
}

func (s *sampleStore) Corrections(context.Context) ([]budget.Correction, error) { return nil, s.err }

// ObserveRatio answers, as if another replica had seen more, a large
// number of samples of each part.
func (s *sampleStore) ObserveRatio(_ context.Context, model string, smp budget.Sample) (budget.Correction, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return budget.Correction{}, s.err
	}
	s.samples[model] = append(s.samples[model], smp)
	return budget.Correction{Model: model, Samples: 1000, OtherSamples: 2000}, nil
}

// TestCalibratorLearns sends prompts to a fake counting twice o200k_base's
// tokens of ASCII pieces and three times those of other pieces, and checks
// what each prompt teaches (from the usage or a context_length_exceeded
// error) of each part's ratio, and what it leaves alone.
func TestCalibratorLearns(t *testing.T) {
	tk := budget.NewTokenizers()
	o200k := tk.Base("llama3")
	code := strings.Repeat("func handle(ctx context.Context) error { return nil }\n", 100)
	const greekLine = "Ωμέγα καλημέρα κόσμε Ελλάδα\n"
	greek := strings.Repeat(greekLine, 200)
	request := func(model, content string) openai.ChatCompletionRequest {
		return openai.ChatCompletionRequest{Model: model, Messages: []openai.ChatCompletionMessage{{Role: "user", Content: content}}}
	}
	ascii := budget.Correction{Model: "llama3", Ratio: 2, Samples: 10} // the ASCII ratio learned
	tests := []struct {
		name     string
		req      openai.ChatCompletionRequest
		known    []budget.Correction
		context  int   // the fake's context; 0 for none
		storeErr error // what the store fails with
		want     []budget.Sample
		wantErr  bool
	}{
		{"code teaches the ASCII ratio", request("llama3", code), nil, 0, nil,
			[]budget.Sample{{Ratio: 2, Counts: true}}, false},
		{"the configured model when the request names none", request("", code), nil, 0, nil,
			[]budget.Sample{{Ratio: 2, Counts: true}}, false},
		{"Greek, once the ASCII ratio is known, teaches the other ratio", request("llama3", greek), []budget.Correction{ascii}, 0, nil,
			[]budget.Sample{{Other: true, Ratio: 3, Counts: true}}, false},
		{"code with a few Greek words raises the other ratio, no sample", request("llama3", code+strings.Repeat(greekLine, 40)), []budget.Correction{ascii}, 0, nil,
			[]budget.Sample{{Other: true, Ratio: 3}}, false},
		{"Greek before the ASCII ratio: covered by a token per byte", request("llama3", greek), nil, 0, nil,
			[]budget.Sample{{}}, false},
		{"an overflow states the server's count", request("llama3", greek), []budget.Correction{ascii}, 1000, nil,
			[]budget.Sample{{Other: true, Ratio: 3, Counts: true}}, true},
		{"an OpenAI model is not corrected", request("gpt-4o", code), nil, 0, nil, nil, false},
		{"a short prompt teaches nothing", request("llama3", "hi"), nil, 0, nil, nil, false},
		{"a failing store is reported, memory learns", request("llama3", code), nil, 0, errors.New("db down"), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := []llmtest.Option{llmtest.WithTokenizer(func(s string) int {
				sp, err := o200k.CountSplit(t.Context(), s)
				if err != nil {
					t.Error(err)
				}
				return 2*sp.ASCII + 3*sp.Other
			})}
			if tt.context > 0 {
				opts = append(opts, llmtest.WithContext(tt.context))
			}
			srv := llmtest.New(t, func(llmtest.Request) llmtest.Response { return llmtest.Text("ok") }, opts...)
			corr := budget.NewCorrections(tt.known)
			store := &sampleStore{samples: map[string][]budget.Sample{}, err: tt.storeErr}
			var reported []error
			c := llm.NewCalibrator(llm.New(llm.Config{BaseURL: srv.URL(), Model: "llama3"}, nil), llm.Calibration{
				Model: "llama3", Base: o200k, Corrections: corr, Store: store,
				OnError: func(err error) { reported = append(reported, err) },
			})
			_, err := c.Chat(t.Context(), tt.req)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Chat error = %v, want an error: %t", err, tt.wantErr)
			}
			model := tt.req.Model
			if model == "" {
				model = "llama3"
			}
			// The fake frames messages a little differently (4 tokens a
			// message against 3 and the role): the ratios are near 2 and 3.
			approx := cmpopts.EquateApprox(0, 0.03)
			if d := cmp.Diff(tt.want, store.samples[model], approx); d != "" {
				t.Errorf("stored samples (-want +got):\n%s", d)
			}
			want := budget.NewCorrections(tt.known).Get(model)
			for _, smp := range tt.want {
				want = want.Observe(smp).Merge(budget.Correction{Samples: 1000, OtherSamples: 2000})
			}
			if tt.storeErr != nil {
				want = want.Observe(budget.Sample{Ratio: 2, Counts: true})
			}
			if d := cmp.Diff(want, corr.Get(model), approx, cmpopts.IgnoreFields(budget.Correction{}, "UpdatedAt")); d != "" {
				t.Errorf("learned (-want +got):\n%s", d)
			}
			if (tt.storeErr != nil) != (len(reported) == 1) {
				t.Errorf("reported %v, want the store's error once", reported)
			}
		})
	}
}

func TestPromptTokensOf(t *testing.T) {
	tests := map[string]int{
		"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8000 in the messages, 1000 in the completion).": 8000,
		"This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length.":      130532,
		"This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens.":                                       5000,
		"the request exceeds the available context size": 0,
		"": 0,
	}
	for msg, want := range tests {
		if got := llm.PromptTokensOf(msg); got != want {
			t.Errorf("PromptTokensOf(%q) = %d, want %d", msg, got, want)
		}
	}
}
