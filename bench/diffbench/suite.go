package diffbench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mergeguard/mergeguard/bench/internal/measure"
	"github.com/mergeguard/mergeguard/review/diff/difftest"
)

// Input is one set of diffs the implementations are timed on.
type Input struct {
	Name  string
	Diffs [][]byte
	Texts []string // Diffs as strings
	Lines int      // diff lines in all
	Bytes int
}

// Fixtures reads every *.diff of dir as one input.
func Fixtures(dir string) (Input, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.diff"))
	if err != nil {
		return Input{}, fmt.Errorf("fixtures: %w", err)
	}
	if len(names) == 0 {
		return Input{}, fmt.Errorf("fixtures: no *.diff in %s", dir)
	}
	slices.Sort(names)
	var diffs [][]byte
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			return Input{}, fmt.Errorf("fixtures: %w", err)
		}
		diffs = append(diffs, b)
	}
	return newInput(fmt.Sprintf("%d real diffs (testdata/diffs)", len(diffs)), diffs), nil
}

// Synthetic is a generated git diff of files files with hunks hunks each,
// 20 lines a hunk (8 context, 4 deleted, 8 added): 500 × 5 is 50,000
// lines, the diff review/diff's BenchmarkParseIndex uses.
func Synthetic(files, hunks int) Input {
	text := difftest.Hunks(files, hunks)
	return newInput(fmt.Sprintf("synthetic %d files × %d hunks", files, hunks), [][]byte{[]byte(text)})
}

func newInput(name string, diffs [][]byte) Input {
	in := Input{Name: name, Diffs: diffs}
	for _, d := range diffs {
		in.Texts = append(in.Texts, string(d))
		in.Bytes += len(d)
		in.Lines += strings.Count(string(d), "\n")
	}
	return in
}

// Check reports an error unless every implementation reads every diff of
// in as MergeGuard's does.
func Check(in Input, impls []Impl) error {
	for i, d := range in.Diffs {
		want, err := impls[0].Summarize(d)
		if err != nil {
			return fmt.Errorf("%s, diff %d: %s: %w", in.Name, i, impls[0].Name, err)
		}
		for _, impl := range impls[1:] {
			got, err := impl.Summarize(d)
			if err != nil {
				return fmt.Errorf("%s, diff %d: %s: %w", in.Name, i, impl.Name, err)
			}
			if diff := Compare(want, got); diff != "" {
				return fmt.Errorf("%s, diff %d: %s disagrees with %s: %s", in.Name, i, impl.Name, impls[0].Name, diff)
			}
		}
	}
	return nil
}

// Row is one implementation's time on one input.
type Row struct {
	Input string `json:"input"`
	Impl  string `json:"impl"`
	measure.Timing
	// MBPerS is the input's size over the CPU time of one call.
	MBPerS float64 `json:"mb_per_cpu_s"`
	// Ratio is this row's CPU time over MergeGuard's (ParseString +
	// NewIndex) on the same input: above 1, the peer is slower.
	Ratio float64 `json:"time_vs_mergeguard"`
}

// Run checks, then times each implementation on in (each call parses every
// diff of in once).
func Run(in Input, impls []Impl, rounds int, minRound time.Duration) ([]Row, error) {
	if err := Check(in, impls); err != nil {
		return nil, err
	}
	fns := make([]func() error, len(impls))
	for i, impl := range impls {
		fns[i] = func() error {
			for j, d := range in.Diffs {
				if err := impl.Run(d, in.Texts[j]); err != nil {
					return fmt.Errorf("%s: %w", impl.Name, err)
				}
			}
			return nil
		}
	}
	ts, err := measure.Rounds(fns, rounds, minRound)
	if err != nil {
		return nil, err
	}
	rows := make([]Row, len(impls))
	for i, t := range ts {
		rows[i] = Row{Input: in.Name, Impl: impls[i].Name, Timing: t,
			MBPerS: float64(in.Bytes) / 1e6 / (t.CPUNsPerOp / 1e9), Ratio: measure.Ratio(t.CPUNsPerOp, ts[0].CPUNsPerOp)}
	}
	return rows, nil
}
