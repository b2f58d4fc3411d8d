package llm_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mergeguard/mergeguard/review/budget"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
)

// ratioStore is a budget.CorrectionStore in memory that can fail.
type ratioStore struct {
	mu     sync.Mutex
	ratios map[string][]float64
	err    error
}

func (s *ratioStore) Corrections(context.Context) ([]budget.Correction, error) { return nil, s.err }

func (s *ratioStore) ObserveRatio(_ context.Context, model string, ratio float64) (budget.Correction, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return budget.Correction{}, s.err
	}
	s.ratios[model] = append(s.ratios[model], ratio)
	// Another replica saw more: the store answers its ratio and samples.
	return budget.Correction{Model: model, Ratio: max(ratio, 3), Samples: 1000}, nil
}

// TestCalibratorLearns sends prompts to a fake counting twice o200k_base's
// tokens and checks what the correction learns from the usage and from a
// context_length_exceeded error, and what it leaves alone.
func TestCalibratorLearns(t *testing.T) {
	tk := budget.NewTokenizers()
	o200k := tk.ForModel("gpt-4o")
	long := strings.Repeat("func handle(ctx context.Context) error { return nil }\n", 100)
	request := func(model, content string) openai.ChatCompletionRequest {
		return openai.ChatCompletionRequest{Model: model, Messages: []openai.ChatCompletionMessage{{Role: "user", Content: content}}}
	}
	tests := []struct {
		name      string
		req       openai.ChatCompletionRequest
		context   int   // the fake's context; 0 for none
		storeErr  error // what the store fails with
		wantRatio float64
		wantErr   bool
		wantSaved int
	}{
		{"usage of an unknown model", request("llama3", long), 0, nil, 2, false, 1},
		{"the configured model when the request names none", request("", long), 0, nil, 2, false, 1},
		{"an OpenAI model is not corrected", request("gpt-4o", long), 0, nil, 0, false, 0},
		{"a short prompt teaches nothing", request("llama3", "hi"), 0, nil, 0, false, 0},
		{"an overflow states the server's count", request("llama3", long), 1000, nil, 2, true, 1},
		{"a failing store is reported, memory learns", request("llama3", long), 0, errors.New("db down"), 2, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := []llmtest.Option{llmtest.WithTokenizer(func(s string) int { return 2 * o200k.Count(s) })}
			if tt.context > 0 {
				opts = append(opts, llmtest.WithContext(tt.context))
			}
			srv := llmtest.New(t, func(llmtest.Request) llmtest.Response { return llmtest.Text("ok") }, opts...)
			corr := budget.NewCorrections(nil)
			store := &ratioStore{ratios: map[string][]float64{}, err: tt.storeErr}
			var reported []error
			c := llm.NewCalibrator(llm.New(llm.Config{BaseURL: srv.URL(), Model: "llama3"}, nil), llm.Calibration{
				Model: "llama3", Base: tk.Base("llama3"), Corrections: corr, Store: store,
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
			// message against 3 and the role): the ratio is near 2.
			saved := store.ratios[model]
			if len(saved) != tt.wantSaved {
				t.Fatalf("stored %v, want %d ratios", saved, tt.wantSaved)
			}
			k := corr.Get(model)
			if math.Abs(k.Ratio-tt.wantRatio) > 0.02 && (tt.wantSaved == 0 || k.Ratio != 3) {
				t.Errorf("learned %+v, want a ratio near %v", k, tt.wantRatio)
			}
			if tt.wantSaved > 0 && (k.Ratio != 3 || k.Samples != 1000) {
				t.Errorf("learned %+v, want the store's answer merged", k)
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
