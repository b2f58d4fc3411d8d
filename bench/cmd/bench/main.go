// Command bench runs the side-by-side benchmark suite: MergeGuard's webhook
// intake, diff parsing and token counting against their peers (see the
// README's Performance section). It prints the table and writes it, with
// the machine it ran on, as JSON to -out. `make bench-peers` runs it from
// bench/ under scripts/with-postgres.sh --durable, which starts a
// PostgreSQL with default durability; the intake needs its URL in
// MERGEGUARD_BENCH_DATABASE_URL.
//
//	go run ./cmd/bench -out results.json
//
// "bench intake-server -impl mergeguard|go-githubapp -db URL -secret S" is
// the intake process the suite starts for each side. With
// -intake-cpuprofile P each writes its CPU profile to P.mergeguard and
// P.go-githubapp, for `go tool pprof`.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/mergeguard/mergeguard/bench/diffbench"
	"github.com/mergeguard/mergeguard/bench/intakebench"
	"github.com/mergeguard/mergeguard/bench/internal/measure"
	"github.com/mergeguard/mergeguard/bench/report"
	"github.com/mergeguard/mergeguard/bench/tokenbench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// options are the suite's flags.
type options struct {
	out, testdata, suites, commit    string
	rounds                           int
	round                            time.Duration
	senders, rate, max, intakeRounds int
	seconds                          time.Duration
	cpuProfile                       string
}

func run(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "intake-server" {
		return intakeServer(ctx, args[1:])
	}
	var o options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&o.out, "out", "results.json", "where the results are written as JSON (\"\" writes none)")
	fs.StringVar(&o.testdata, "testdata", "testdata", "the directory of the inputs")
	fs.StringVar(&o.suites, "suites", "intake,diff,tokens", "the suites to run, comma-separated")
	fs.StringVar(&o.commit, "commit", "", "the app's commit, recorded with the machine")
	fs.IntVar(&o.rounds, "rounds", 15, "timed rounds per implementation and input (diff, tokens); the fastest counts")
	fs.DurationVar(&o.round, "round", 100*time.Millisecond, "the least time of a round (diff, tokens)")
	fs.IntVar(&o.senders, "senders", 50, "concurrent senders (intake)")
	fs.IntVar(&o.rate, "rate", 500, "deliveries/s offered in the paced level (intake)")
	fs.IntVar(&o.max, "deliveries", 5000, "most deliveries per level (intake)")
	fs.IntVar(&o.intakeRounds, "intake-rounds", 5, "rounds of every level per intake, the two taking turns; each figure is the median of the rounds' (intake)")
	fs.DurationVar(&o.seconds, "seconds", 15*time.Second, "longest level (intake)")
	fs.StringVar(&o.cpuProfile, "intake-cpuprofile", "", "write each intake process's CPU profile to this path with the intake's name appended (intake)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	res, err := suite(ctx, o)
	if err != nil {
		return err
	}
	return output(res, o.out)
}

// suite runs the suites o names.
func suite(ctx context.Context, o options) (report.Results, error) {
	res := report.Results{Machine: measure.ThisMachine(time.Now(), o.commit),
		Command: strings.Join(append([]string{"bench"}, os.Args[1:]...), " ")}
	for _, s := range strings.Split(o.suites, ",") {
		var err error
		switch strings.TrimSpace(s) {
		case "intake":
			err = intakeSuite(ctx, o, &res)
		case "diff":
			err = diffSuite(o, &res)
		case "tokens":
			err = tokenSuite(o, &res)
		default:
			err = fmt.Errorf("unknown suite %q", s)
		}
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

func intakeSuite(ctx context.Context, o options, res *report.Results) error {
	pg := os.Getenv("MERGEGUARD_BENCH_DATABASE_URL")
	if pg == "" {
		return fmt.Errorf("intake: set MERGEGUARD_BENCH_DATABASE_URL to a PostgreSQL server (make bench starts one)")
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("intake: %w", err)
	}
	payload, err := os.ReadFile(filepath.Join(o.testdata, "webhooks", "pull_request.opened.payload.json"))
	if err != nil {
		return fmt.Errorf("intake: %w", err)
	}
	fmt.Fprintf(os.Stderr, "intake: %d senders saturated, then %d/s offered; up to %d deliveries or %s each; %d rounds\n",
		o.senders, o.rate, o.max, o.seconds, o.intakeRounds)
	c, err := intakebench.Run(ctx, intakebench.Config{
		ServerCommand: serverCommand(exe, o.cpuProfile), PostgresURL: pg, Payload: payload, Pulls: 500, Warmup: 300,
		Rounds: o.intakeRounds,
		Levels: []intakebench.Level{
			{Senders: o.senders, Max: o.max, MaxDuration: o.seconds},
			{Senders: o.senders, Rate: o.rate, Max: o.max, MaxDuration: o.seconds},
		},
	})
	if err != nil {
		return fmt.Errorf("intake: %w", err)
	}
	res.Intake = &c
	return nil
}

func diffSuite(o options, res *report.Results) error {
	fixtures, err := diffbench.Fixtures(filepath.Join(o.testdata, "diffs"))
	if err != nil {
		return err
	}
	impls := append(diffbench.Impls(), diffbench.OursReader())
	for _, in := range []diffbench.Input{fixtures, diffbench.Synthetic(500, 5)} {
		fmt.Fprintf(os.Stderr, "diff: %s (%d lines)\n", in.Name, in.Lines)
		rows, err := diffbench.Run(in, impls, o.rounds, o.round)
		if err != nil {
			return fmt.Errorf("diff: %w", err)
		}
		res.Diff = append(res.Diff, rows...)
	}
	return nil
}

func tokenSuite(o options, res *report.Results) error {
	counters, err := tokenbench.Counters()
	if err != nil {
		return err
	}
	for _, name := range []string{"code.go.txt", "mixed.txt"} {
		b, err := os.ReadFile(filepath.Join(o.testdata, "tokens", name))
		if err != nil {
			return fmt.Errorf("tokens: %w", err)
		}
		label := map[string]string{"code.go.txt": "5,000-line Go file", "mixed.txt": "mixed text"}[name]
		fmt.Fprintf(os.Stderr, "tokens: %s\n", label)
		rows, err := tokenbench.Run(tokenbench.Input{Name: label, Text: string(b)}, counters, o.rounds, o.round)
		if err != nil {
			return fmt.Errorf("tokens: %w", err)
		}
		res.Tokens = append(res.Tokens, rows...)
	}
	return nil
}

// output prints the table and writes the JSON to out.
func output(res report.Results, out string) error {
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	for _, row := range res.Table() {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "\n%s\n", res.MachineLine())
	if out == "" {
		return nil
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil { //nolint:gosec // committed results, readable by all
		return err
	}
	fmt.Fprintf(os.Stdout, "results written to %s\n", out)
	return nil
}

// serverCommand is the command that starts an intake process.
func serverCommand(exe, cpuProfile string) []string {
	cmd := []string{exe, "intake-server"}
	if cpuProfile != "" {
		cmd = append(cmd, "-cpuprofile", cpuProfile)
	}
	return cmd
}

func intakeServer(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("intake-server", flag.ContinueOnError)
	impl := fs.String("impl", "", "mergeguard or go-githubapp")
	db := fs.String("db", "", "MergeGuard's database URL")
	secret := fs.String("secret", "", "the webhook secret")
	profile := fs.String("cpuprofile", "", "write the process's CPU profile to this path + \".\" + impl")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *profile != "" {
		f, err := os.Create(*profile + "." + *impl)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			_ = f.Close()
			return err
		}
		defer func() {
			pprof.StopCPUProfile()
			_ = f.Close()
		}()
	}
	return intakebench.Serve(ctx, *impl, *db, *secret, os.Stdout)
}
