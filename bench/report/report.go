// Package report holds the side-by-side benchmark's results
// (bench/results.json) and renders them as a table, in Markdown for the
// README and as plain text for the terminal.
package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/mergeguard/mergeguard/bench/diffbench"
	"github.com/mergeguard/mergeguard/bench/intakebench"
	"github.com/mergeguard/mergeguard/bench/internal/measure"
	"github.com/mergeguard/mergeguard/bench/tokenbench"
)

// Results is what `make bench` writes to bench/results.json.
type Results struct {
	Machine measure.Machine `json:"machine"`
	// Command is the suite's command line, run in bench/ (make
	// bench-peers runs it).
	Command string                  `json:"command"`
	Intake  *intakebench.Comparison `json:"intake,omitempty"`
	Diff    []diffbench.Row         `json:"diff,omitempty"`
	Tokens  []tokenbench.Row        `json:"tokens,omitempty"`
}

// Table is the results as rows of cells, a header row first.
func (r Results) Table() [][]string {
	rows := [][]string{{"benchmark", "MergeGuard", "peer", "ratio (MergeGuard / peer)"}}
	if c := r.Intake; c != nil {
		for _, p := range c.Levels {
			load := fmt.Sprintf("intake, %d senders, saturated", p.MergeGuard.Senders)
			if p.MergeGuard.Offered > 0 {
				load = fmt.Sprintf("intake, %d senders, %d/s offered", p.MergeGuard.Senders, p.MergeGuard.Offered)
			}
			rows = append(rows,
				[]string{load + ": deliveries/s", f0(p.MergeGuard.PerSecond), "go-githubapp " + f0(p.Anchor.PerSecond), f2(p.Throughput)},
				[]string{load + ": p50 / p99 / max ms", latencies(p.MergeGuard), "go-githubapp " + latencies(p.Anchor), f2(p.P99) + " (p99)"},
				[]string{load + ": CPU ms per delivery", f3(p.MergeGuard.CPUMSPerDelivery), "go-githubapp " + f3(p.Anchor.CPUMSPerDelivery), f2(p.CPU)},
				[]string{load + ": context switches per delivery", f1(p.MergeGuard.SwitchesPerDelivery),
					"go-githubapp " + f1(p.Anchor.SwitchesPerDelivery), f2(p.Switches)},
			)
		}
	}
	rows = append(rows, diffRows(r.Diff)...)
	return append(rows, tokenRows(r.Tokens)...)
}

func diffRows(rs []diffbench.Row) [][]string {
	var rows [][]string
	var ours diffbench.Row
	for _, d := range rs {
		if strings.HasPrefix(d.Impl, "mergeguard (ParseString") {
			ours = d
			continue
		}
		if strings.HasPrefix(d.Impl, "mergeguard (Parse(io.Reader)") {
			rows = append(rows, []string{"diff Parse(io.Reader) + index vs ParseString + index, " + d.Input + ": CPU ms",
				ms(d.CPUNsPerOp), "ParseString " + ms(ours.CPUNsPerOp), f2(measure.Ratio(d.CPUNsPerOp, ours.CPUNsPerOp))})
			continue
		}
		// A peer's row: MergeGuard's time over the peer's.
		rows = append(rows, []string{"diff parse + index, " + d.Input + ": CPU ms",
			ms(ours.CPUNsPerOp), shortName(d.Impl) + " " + ms(d.CPUNsPerOp), f2(measure.Ratio(ours.CPUNsPerOp, d.CPUNsPerOp))})
	}
	return rows
}

func tokenRows(rs []tokenbench.Row) [][]string {
	var rows [][]string
	var ours tokenbench.Row
	for _, t := range rs {
		if strings.HasPrefix(t.Impl, "mergeguard") {
			ours = t
			continue
		}
		rows = append(rows, []string{fmt.Sprintf("token count, %s (%d KB, %d tokens): MB per CPU second", t.Input, t.Bytes/1000, t.Tokens),
			f2(ours.MBPerS), shortName(t.Impl) + " " + f2(t.MBPerS), f2(measure.Ratio(ours.MBPerS, t.MBPerS))})
	}
	return rows
}

// shortName is an implementation's name without its parenthesis.
func shortName(impl string) string {
	name, _, _ := strings.Cut(impl, " (")
	return name
}

func latencies(r intakebench.Result) string {
	return fmt.Sprintf("%.1f / %.1f / %.0f", r.P50MS, r.P99MS, r.MaxMS)
}

func f0(v float64) string { return fmt.Sprintf("%.0f", v) }
func f1(v float64) string { return fmt.Sprintf("%.1f", v) }
func f2(v float64) string { return fmt.Sprintf("%.2f", v) }
func f3(v float64) string { return fmt.Sprintf("%.3f", v) }
func ms(ns float64) string {
	return fmt.Sprintf("%.3f", ns/1e6)
}

// MachineLine describes where and when the results were made.
func (r Results) MachineLine() string {
	m := r.Machine
	s := fmt.Sprintf("%s, %d cores, %s, %s, %s", m.CPU, m.Cores, m.OS, m.Go, m.Date)
	if m.Commit != "" {
		s += ", commit " + m.Commit
	}
	if r.Intake != nil {
		s += "; PostgreSQL " + r.Intake.Durability
	}
	return s
}

// Markdown writes the table in Markdown, the machine line under it.
func (r Results) Markdown(w io.Writer) error {
	var b strings.Builder
	for i, row := range r.Table() {
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		if i == 0 {
			b.WriteString(strings.Repeat("|---", len(row)) + "|\n")
		}
	}
	fmt.Fprintf(&b, "\nMeasured on %s, by `make bench-peers` (`%s` in bench/).\n", r.MachineLine(), r.Command)
	_, err := io.WriteString(w, b.String())
	return err
}
