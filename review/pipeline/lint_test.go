package pipeline

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/gomod/gomodtest"
	"github.com/mergeguard/mergeguard/review/lint"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/review/source/difftext"
	"github.com/mergeguard/mergeguard/review/task"
)

// lintDiff adds a workflow that puts a PR title into a script and a Go file
// with a printf mistake, and changes one line of a Dockerfile whose other
// lines the diff does not show.
const lintDiff = `diff --git a/.github/workflows/greet.yml b/.github/workflows/greet.yml
new file mode 100644
--- /dev/null
+++ b/.github/workflows/greet.yml
@@ -0,0 +1,9 @@
+name: greet
+on: pull_request_target
+jobs:
+  greet:
+    runs-on: ubuntu-latest
+    steps:
+      - name: Greet
+        run: |
+          echo "${{ github.event.pull_request.title }}"
diff --git a/cmd/hello/main.go b/cmd/hello/main.go
new file mode 100644
--- /dev/null
+++ b/cmd/hello/main.go
@@ -0,0 +1,7 @@
+package main
+
+import "fmt"
+
+func main() {
+	fmt.Printf("%d\n", "hello")
+}
diff --git a/Dockerfile b/Dockerfile
--- a/Dockerfile
+++ b/Dockerfile
@@ -1,1 +1,1 @@
-FROM alpine:3.19
+FROM alpine:3.20
`

// TestLinters: the linters' findings are reported and verified like the
// analyzers', a file the diff holds only in part (and the Source cannot
// read) is named in a note, and the model sees the findings on its
// chunk's files as evidence.
func TestLinters(t *testing.T) {
	srv := llmtest.NewQueue(t, answer())
	res := runLinters(t, srv, lintDiff)
	type row struct {
		Agent, File string
		Line        int
		Status      review.VerificationStatus
	}
	var got []row
	for _, f := range res.Verdict.Findings() {
		got = append(got, row{f.Agent, f.FilePath, f.LineStart, f.VerificationStatus})
	}
	want := []row{
		{"analyzer:actionlint", ".github/workflows/greet.yml", 8, review.Verified},
		{"analyzer:govet", "cmd/hello/main.go", 6, review.Verified},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	notes := strings.Join(res.Verdict.Notes, "\n")
	for _, n := range []string{"dockerfile: 1 files could not be read whole", "shellcheck is not installed"} {
		if !strings.Contains(notes, n) {
			t.Errorf("notes lack %q:\n%s", n, notes)
		}
	}
	user := srv.Requests()[0].Messages[1].Content
	begin, hit, end := strings.Index(user, "<<<BEGIN ANALYZERS"), strings.Index(user, "cmd/hello/main.go:6-6"), strings.Index(user, "<<<END ANALYZERS")
	if begin < 0 || begin > hit || hit > end {
		t.Errorf("the prompt lacks the analyzers' findings as data:\n%s", user)
	}
}

// runLinters reviews text with the default linters, without shellcheck,
// and a model that finds nothing.
func runLinters(t *testing.T, srv *llmtest.Server, text string) *task.Result {
	t.Helper()
	client := llm.New(llm.Config{BaseURL: srv.URL(), Model: "gpt-4o", MaxRetries: 1}, nil)
	src, err := difftext.New(text)
	if err != nil {
		t.Fatal(err)
	}
	deps := Deps{Config: testLLM(func(c *config.LLM) { c.Model = "gpt-4o" }), LLM: client, Linters: lint.Default("", gomodtest.Std(t), nil)}
	res, err := newTest(deps).Run(t.Context(), task.Request{Source: src, Repo: config.DefaultRepo()})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// scriptDiff changes a script without an extension, a Makefile and a
// Python program without one, and deletes a script.
const scriptDiff = `diff --git a/bin/rotate b/bin/rotate
new file mode 100755
--- /dev/null
+++ b/bin/rotate
@@ -0,0 +1,3 @@
+#!/usr/bin/env bash
+local keep=$RANDOM
+echo $keep
diff --git a/Makefile b/Makefile
new file mode 100644
--- /dev/null
+++ b/Makefile
@@ -0,0 +1,2 @@
+all:
+	go build ./...
diff --git a/bin/report b/bin/report
new file mode 100755
--- /dev/null
+++ b/bin/report
@@ -0,0 +1,2 @@
+#!/usr/bin/env python3
+print("report")
diff --git a/bin/old b/bin/old
deleted file mode 100755
--- a/bin/old
+++ /dev/null
@@ -1,2 +0,0 @@
-#!/bin/sh
-echo old
`

// TestLintersByContent: a file without an extension goes to the shell
// linter when its #! line names a shell, and only then.
func TestLintersByContent(t *testing.T) {
	res := runLinters(t, llmtest.NewQueue(t, answer()), scriptDiff)
	var got []string
	for _, n := range res.Verdict.Notes {
		if strings.HasPrefix(n, "shellcheck") {
			got = append(got, n)
		}
	}
	want := []string{"shellcheck: 1 file not checked: shellcheck is not installed."}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shellcheck notes (-want +got):\n%s", diff)
	}
}
