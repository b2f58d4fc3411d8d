package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/bench/diffbench"
	"github.com/mergeguard/mergeguard/bench/intakebench"
	"github.com/mergeguard/mergeguard/bench/internal/measure"
	"github.com/mergeguard/mergeguard/bench/tokenbench"
)

func TestTable(t *testing.T) {
	r := Results{
		Intake: &intakebench.Comparison{Levels: []intakebench.LevelPair{{
			MergeGuard: intakebench.Result{Senders: 50, PerSecond: 500, P50MS: 10, P99MS: 40, MaxMS: 90, CPUMSPerDelivery: 0.4, SwitchesPerDelivery: 15},
			Anchor:     intakebench.Result{Senders: 50, PerSecond: 2000, P50MS: 5, P99MS: 20, MaxMS: 30, CPUMSPerDelivery: 0.1, SwitchesPerDelivery: 7.5},
			Throughput: 0.25, P99: 2, CPU: 4, Switches: 2,
		}}},
		Diff: []diffbench.Row{
			{Input: "x", Impl: "mergeguard (ParseString + NewIndex)", Timing: measure.Timing{CPUNsPerOp: 2e6}},
			{Input: "x", Impl: "reviewdog (ParseMultiFile + NewDiffFilter)", Timing: measure.Timing{CPUNsPerOp: 1e6}},
			{Input: "x", Impl: "mergeguard (Parse(io.Reader) + NewIndex)", Timing: measure.Timing{CPUNsPerOp: 3e6}},
		},
		Tokens: []tokenbench.Row{
			{Input: "t", Bytes: 2000, Tokens: 500, Impl: "mergeguard (review/budget o200k)", MBPerS: 10},
			{Input: "t", Bytes: 2000, Tokens: 500, Impl: "pkoukk/tiktoken-go (EncodeOrdinary o200k)", MBPerS: 4},
		},
	}
	want := [][]string{
		{"benchmark", "MergeGuard", "peer", "ratio (MergeGuard / peer)"},
		{"intake, 50 senders, saturated: deliveries/s", "500", "go-githubapp 2000", "0.25"},
		{"intake, 50 senders, saturated: p50 / p99 / max ms", "10.0 / 40.0 / 90", "go-githubapp 5.0 / 20.0 / 30", "2.00 (p99)"},
		{"intake, 50 senders, saturated: CPU ms per delivery", "0.400", "go-githubapp 0.100", "4.00"},
		{"intake, 50 senders, saturated: context switches per delivery", "15.0", "go-githubapp 7.5", "2.00"},
		{"diff parse + index, x: CPU ms", "2.000", "reviewdog 1.000", "2.00"},
		{"diff Parse(io.Reader) + index vs ParseString + index, x: CPU ms", "3.000", "ParseString 2.000", "1.50"},
		{"token count, t (2 KB, 500 tokens): MB per CPU second", "10.00", "pkoukk/tiktoken-go 4.00", "2.50"},
	}
	if diff := cmp.Diff(want, r.Table()); diff != "" {
		t.Errorf("Table (-want +got):\n%s", diff)
	}
	var b strings.Builder
	if err := r.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "|---|---|---|---|\n| intake, 50 senders") {
		t.Errorf("Markdown:\n%s", b.String())
	}
}
