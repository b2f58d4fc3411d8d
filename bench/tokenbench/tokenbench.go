// Package tokenbench compares MergeGuard's token counter (review/budget,
// o200k_base) with github.com/pkoukk/tiktoken-go on the same texts: counts
// must agree, then both are timed.
package tokenbench

import (
	"fmt"
	"time"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/mergeguard/mergeguard/bench/internal/measure"
	"github.com/mergeguard/mergeguard/review/budget"
)

// Input is one text to count.
type Input struct {
	Name string
	Text string
}

// Counter counts a text's tokens.
type Counter struct {
	Name  string
	Count func(text string) int
}

// Counters returns MergeGuard's o200k counter and tiktoken-go's (with its
// vocabulary from the offline loader, as the app embeds it), both loaded.
func Counters() ([]Counter, error) {
	ours := budget.NewTokenizers().ForModel("gpt-4o")
	ours.Count("load") // loads the vocabulary
	tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding(budget.O200kBase)
	if err != nil {
		return nil, fmt.Errorf("tiktoken-go: %w", err)
	}
	return []Counter{
		{Name: "mergeguard (review/budget o200k)", Count: ours.Count},
		{Name: "pkoukk/tiktoken-go (EncodeOrdinary o200k)", Count: func(text string) int { return len(enc.EncodeOrdinary(text)) }},
	}, nil
}

// Row is one counter's speed on one input.
type Row struct {
	Input  string `json:"input"`
	Bytes  int    `json:"bytes"`
	Impl   string `json:"impl"`
	Tokens int    `json:"tokens"`
	measure.Timing
	// MBPerS is the input's size over the CPU time of one count.
	MBPerS float64 `json:"mb_per_cpu_s"`
	// Ratio is this row's MB/s over MergeGuard's on the same input: below
	// 1, the peer is slower.
	Ratio float64 `json:"speed_vs_mergeguard"`
}

// Run checks that the counters agree on in, then times them.
func Run(in Input, counters []Counter, rounds int, minRound time.Duration) ([]Row, error) {
	counts := make([]int, len(counters))
	for i, c := range counters {
		counts[i] = c.Count(in.Text)
		if counts[i] != counts[0] {
			return nil, fmt.Errorf("%s: %s counts %d tokens, %s %d", in.Name, c.Name, counts[i], counters[0].Name, counts[0])
		}
	}
	fns := make([]func() error, len(counters))
	for i, c := range counters {
		fns[i] = func() error {
			if n := c.Count(in.Text); n != counts[i] {
				return fmt.Errorf("%s: %s counted %d, then %d", in.Name, c.Name, counts[i], n)
			}
			return nil
		}
	}
	ts, err := measure.Rounds(fns, rounds, minRound)
	if err != nil {
		return nil, err
	}
	rows := make([]Row, len(counters))
	for i, t := range ts {
		mbps := float64(len(in.Text)) / 1e6 / (t.CPUNsPerOp / 1e9)
		rows[i] = Row{Input: in.Name, Bytes: len(in.Text), Impl: counters[i].Name, Tokens: counts[i], Timing: t, MBPerS: mbps}
	}
	for i := range rows {
		rows[i].Ratio = measure.Ratio(rows[i].MBPerS, rows[0].MBPerS)
	}
	return rows, nil
}
