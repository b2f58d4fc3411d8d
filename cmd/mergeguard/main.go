// Command mergeguard is MergeGuard's one binary: the GitHub App server
// (serve), database migrations (migrate), local reviews (review), the
// export of a repository's learnings (learnings) and its version. Run `mergeguard help` for the commands and the configuration.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review/analyzer"
	"github.com/mergeguard/mergeguard/review/budget"
	"github.com/mergeguard/mergeguard/review/gomod"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal kills at once
	}()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mergeguard:", err)
		os.Exit(exitCode(err))
	}
}

// run is the whole program: it dispatches args to a subcommand, which wires
// what it needs from the configuration. It never exits the process.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runIn(ctx, newProcess(), args, getenv, stdout, stderr)
}

// process is what the commands run by one process share: what is costly to
// load and the same for every command. main makes one (through run).
type process struct {
	// tokenizers count tokens; each vocabulary is loaded once, on first
	// use (about 0.4 s).
	tokenizers *budget.Tokenizers
	// std is the Go standard library's types (nil: none on this
	// machine), listed once, on first use.
	std *gomod.Std
	// analyzers are the built-in analyzers; the secret scan compiles
	// gitleaks' rules once, on first use (about 0.2 s).
	analyzers []analyzer.Analyzer
}

// newProcess returns what a process's commands share, nothing loaded yet.
func newProcess() *process {
	return &process{tokenizers: budget.NewTokenizers(), std: goStd(), analyzers: analyzer.Builtin()}
}

// runIn is run with p, the process's shared values.
func runIn(ctx context.Context, p *process, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return usageError{errors.New("no command given")}
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "serve":
		err = runServe(ctx, p, rest, getenv, stderr)
	case "migrate":
		err = runMigrate(ctx, rest, getenv, stdout, stderr)
	case "review":
		err = runReview(ctx, p, rest, getenv, stdout, stderr)
	case "learnings":
		err = runLearnings(ctx, rest, getenv, stdout, stderr)
	case "quality":
		err = runQuality(ctx, rest, getenv, stdout, stderr)
	case "eval":
		err = runEval(ctx, p, rest, getenv, stdout, stderr)
	case "app":
		err = runApp(ctx, rest, getenv, stdout, stderr)
	case "token":
		err = runToken(ctx, rest, getenv, stdout, stderr)
	case "version", "--version", "-version":
		err = runVersion(rest, stdout, stderr)
	case "completion":
		err = runCompletion(rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		usage(stdout)
	default:
		err = usageError{fmt.Errorf("unknown command %q%s; \"mergeguard help\" lists the commands", cmd, didYouMean(cmd, commandNames()))}
	}
	if errors.Is(err, flag.ErrHelp) {
		return nil // -h printed the command's usage
	}
	return err
}

// usage prints the commands and the environment variables.
func usage(w io.Writer) {
	fmt.Fprint(w, "MergeGuard reviews pull requests with an LLM, as a GitHub App or locally.\n\nUsage:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range commands() {
		fmt.Fprintf(tw, "  mergeguard %s\t%s\n", c.usage, c.summary)
	}
	_ = tw.Flush()
	fmt.Fprint(w, `
"mergeguard COMMAND -h" describes a command, its flags and examples.

Configuration is read from --config FILE (default `+config.DefaultPath+` when it
exists; see config/mergeguard.example.yml), then overridden by:

`)
	for _, v := range config.EnvVars() {
		fmt.Fprintf(tw, "  %s\t%s\n", v.Name, v.Key)
	}
	_ = tw.Flush()
}

// usageError is a mistake on the command line; the process exits 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// ExitCode returns 2, the conventional status for bad usage.
func (e usageError) ExitCode() int { return 2 }

// exitCode returns the status for err: 2 for a usage error, else 1. Only
// the command's own usageError sets it: a wrapped *exec.ExitError (git
// exits 128 outside a repository) has an ExitCode too, and must not leak
// through as the program's status.
func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		return ue.ExitCode()
	}
	return 1
}

// newFlagSet returns a FlagSet for a subcommand; -h prints the command's
// help (see commands) to stderr.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("mergeguard "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		if col, ok := fs.Output().(*flagCollector); ok { // completion asks
			fs.VisitAll(func(f *flag.Flag) { col.flags = append(col.flags, f) })
			return
		}
		c, _ := lookup(name)
		printHelp(fs.Output(), c, fs)
	}
	return fs
}

// configFlag adds the --config flag to fs.
func configFlag(fs *flag.FlagSet) *string {
	return fs.String("config", "", "configuration `file` (default "+config.DefaultPath+" when it exists)")
}

// parseArgs parses flags wherever they appear among args and returns the
// other arguments in order. -h prints the FlagSet's usage and returns
// flag.ErrHelp.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	out := fs.Output()
	fs.SetOutput(io.Discard) // a mistake is one line, returned; not the help
	defer fs.SetOutput(out)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(out)
				fs.Usage()
				return nil, err
			}
			return nil, usageError{flagMistake(fs, err)}
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// loadConfig loads the configuration and validates it with reqs.
func loadConfig(path string, getenv func(string) string, reqs ...config.Requirement) (config.Config, error) {
	cfg, err := config.Load(path, getenv)
	if err != nil {
		return cfg, fmt.Errorf("load configuration:\n%w", err)
	}
	if err := cfg.Validate(reqs...); err != nil {
		return cfg, fmt.Errorf("invalid configuration:\n%w", err)
	}
	return cfg, nil
}

// newLogger returns the process logger: JSON on w, or human-readable lines
// when the format is console, or auto and w is a terminal.
func newLogger(c config.Log, w io.Writer) (*zerolog.Logger, error) {
	level, err := zerolog.ParseLevel(c.Level)
	if err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	tty := isTerminal(w)
	if c.Format == "console" || c.Format == "auto" && tty {
		w = zerolog.ConsoleWriter{Out: w, NoColor: !tty, TimeFormat: time.TimeOnly}
	}
	logger := zerolog.New(w).Level(level).With().Timestamp().Logger()
	return &logger, nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}
