package pipeline

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/task"
)

// awsLine plants an AWS access key id (an exact gitleaks rule).
const awsLine = "+AWS_ACCESS_KEY_ID=AKIAZ7VRSQ5TJN2XMY4W\n"

// newFileDiff is the diff of a new file with the given added lines.
func newFileDiff(path string, lines ...string) string {
	return "diff --git a/" + path + " b/" + path + "\nnew file mode 100644\n--- /dev/null\n+++ b/" + path + "\n" +
		"@@ -0,0 +1," + strconv.Itoa(len(lines)) + " @@\n" + strings.Join(lines, "")
}

// TestSecretScanCoversEveryChangedFile: the names that keep a file from the
// model (lock files, path_filters, binary content) never keep it from the
// secret scan: a live key in any of them is a verified critical finding and
// the verdict requests changes.
func TestSecretScanCoversEveryChangedFile(t *testing.T) {
	filtered := config.DefaultRepo()
	filtered.PathFilters = []string{"!secrets/**"}
	tests := []struct {
		name string
		diff string
		repo config.Repo
	}{
		{"Cargo.lock deep down", newFileDiff("deep/dir/Cargo.lock", "+[[package]]\n", awsLine), config.DefaultRepo()},
		{"yarn.lock", newFileDiff("config/yarn.lock", awsLine), config.DefaultRepo()},
		{"go.sum", newFileDiff("go.sum", awsLine), config.DefaultRepo()},
		{"package-lock.json", newFileDiff("package-lock.json", awsLine), config.DefaultRepo()},
		{"excluded by path_filters", newFileDiff("secrets/prod.env.txt", awsLine), filtered},
		{"binary by content (a NUL on the first line)", newFileDiff("blob.dat", "+\x00\x01\n", awsLine), config.DefaultRepo()},
		{"a NUL on the last line of a long script", newFileDiff("run.sh", append(append([]string{"+#!/bin/sh\n", awsLine},
			slices.Repeat([]string{"+echo padding line\n"}, 2000)...), "+# \x00\n")...), config.DefaultRepo()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			analyzersFind(t, tt.diff, tt.repo, []findingRow{{"Possible secret committed (aws-access-token)", review.SeverityCritical, review.Verified}})
		})
	}
}

// TestBinaryFilesAreReadBackOrNamed: a binary file whose diff printed none
// of its bytes (git's "Binary files … differ", a patch GitHub left out) is
// read back from the head for the secret scan; one that cannot be read is
// named in the review as not reviewed at all.
func TestBinaryFilesAreReadBackOrNamed(t *testing.T) {
	binary := func(path string) string {
		return "diff --git a/" + path + " b/" + path + "\nnew file mode 100644\nindex 0000000..1111111\nBinary files /dev/null and b/" + path + " differ\n"
	}
	src := &memSource{
		diff: binary("tool.bin") + binary("huge.bin"),
		head: map[string]string{
			"tool.bin": "\x7fELF\x00\x00\x01\nAWS_ACCESS_KEY_ID=AKIAZ7VRSQ5TJN2XMY4W\n",
			"huge.bin": "\x00" + strings.Repeat("x", maxBinaryScanBytes),
		},
	}
	res, err := newTest(Deps{Config: testLLM()}).Run(t.Context(), task.Request{Source: src, Repo: config.DefaultRepo()})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Verdict.Findings() {
		got = append(got, f.FilePath+": "+f.Title+" ("+string(f.VerificationStatus)+")")
	}
	want := []string{"tool.bin: Possible secret committed (aws-access-token) (verified)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if len(res.Verdict.Notes) == 0 || !strings.Contains(res.Verdict.Notes[0], "huge.bin") || strings.Contains(res.Verdict.Notes[0], "tool.bin") {
		t.Errorf("notes %q: want the first to name huge.bin alone as not reviewed at all", res.Verdict.Notes)
	}
}

// TestDecideNeverApprovesWithUnreviewedFiles: a change with a file no
// part of MergeGuard could read is commented on at best.
func TestDecideNeverApprovesWithUnreviewedFiles(t *testing.T) {
	tests := []struct {
		name       string
		unreviewed int
		want       review.Decision
	}{
		{"every file reviewed", 0, review.DecisionApprove},
		{"one file not reviewed at all", 1, review.DecisionComment},
	}
	for _, tt := range tests {
		got, _ := decide(true, review.SeverityCritical, nil, false, true, 3, tt.unreviewed)
		if got != tt.want {
			t.Errorf("%s: decide = %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestNarrowKeepsBinaryFilesWhole: an incremental review cannot tell which
// of a binary file's lines a push changed (the since-diff shows none), so
// the file stays whole in its focus and the secret scan reads it again.
func TestNarrowKeepsBinaryFilesWhole(t *testing.T) {
	d, err := diff.ParseString(newFileDiff("blob.bin", "+\x00\x01\n", awsLine) + newFileDiff("app.sh", "+echo hi\n"))
	if err != nil {
		t.Fatal(err)
	}
	since, err := diff.ParseString("diff --git a/blob.bin b/blob.bin\nindex 1111111..2222222 100644\nBinary files a/blob.bin and b/blob.bin differ\n")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range narrow(d, touchedLines(since)).Files {
		got = append(got, fmt.Sprintf("%s +%d", f.Path(), f.Additions))
	}
	if diff := cmp.Diff([]string{"blob.bin +2"}, got); diff != "" {
		t.Errorf("focus (-want +got):\n%s", diff)
	}
}
