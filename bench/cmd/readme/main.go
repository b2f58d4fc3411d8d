// Command readme renders bench/results.json into the README's performance
// section, between the lines "<!-- bench:start -->" and
// "<!-- bench:end -->". Run it from bench/ (make bench does):
//
//	go run ./cmd/readme -results results.json -readme ../README.md
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/mergeguard/mergeguard/bench/report"
)

// The markers around the table in the README.
const (
	startMarker = "<!-- bench:start -->"
	endMarker   = "<!-- bench:end -->"
)

func main() {
	results := flag.String("results", "results.json", "the results to render")
	readme := flag.String("readme", "../README.md", "the README to update")
	flag.Parse()
	if err := run(*results, *readme); err != nil {
		fmt.Fprintln(os.Stderr, "readme:", err)
		os.Exit(1)
	}
}

func run(resultsPath, readmePath string) error {
	b, err := os.ReadFile(resultsPath)
	if err != nil {
		return err
	}
	var res report.Results
	if err := json.Unmarshal(b, &res); err != nil {
		return fmt.Errorf("%s: %w", resultsPath, err)
	}
	doc, err := os.ReadFile(readmePath)
	if err != nil {
		return err
	}
	var table strings.Builder
	if err := res.Markdown(&table); err != nil {
		return err
	}
	out, err := Replace(string(doc), table.String())
	if err != nil {
		return fmt.Errorf("%s: %w", readmePath, err)
	}
	return os.WriteFile(readmePath, []byte(out), 0o644) //nolint:gosec // the README, readable by all
}

// Replace puts body between the markers of doc, in place of what was there.
func Replace(doc, body string) (string, error) {
	before, rest, ok := strings.Cut(doc, startMarker+"\n")
	if !ok {
		return "", fmt.Errorf("no %q line", startMarker)
	}
	_, after, ok := strings.Cut(rest, endMarker)
	if !ok {
		return "", fmt.Errorf("no %q after %q", endMarker, startMarker)
	}
	return before + startMarker + "\n" + body + endMarker + after, nil
}
