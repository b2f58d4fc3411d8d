package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Build information, set at link time:
//
//	go build -ldflags "-X main.version=v1.2.3 -X main.commit=abc1234" ./cmd/mergeguard
//
// Left empty, they come from the module's build info (go install
// module@version, VCS stamping) or read "dev" and "unknown".
var (
	version string
	commit  string
)

type build struct {
	version, commit string
}

// buildInfo returns the version and commit of this binary.
func buildInfo() build {
	b := build{version: version, commit: commit}
	if info, ok := debug.ReadBuildInfo(); ok {
		if b.version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.version = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && b.commit == "" {
				b.commit = s.Value
			}
		}
	}
	if b.version == "" {
		b.version = "dev"
	}
	if b.commit == "" {
		b.commit = "unknown"
	}
	return b
}

// runVersion is `mergeguard version`.
func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", stderr)
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Errorf("version: unexpected argument %q", rest[0])}
	}
	b := buildInfo()
	fmt.Fprintf(stdout, "mergeguard %s (commit %s, %s)\n", b.version, b.commit, runtime.Version())
	return nil
}
