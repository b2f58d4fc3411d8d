package pipeline

import (
	"fmt"
	"path"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/lang"
)

// Kinds of changed files, the groups of a walkthrough built from the diff,
// in the order they are shown.
const (
	kindSource       = "source"
	kindTests        = "tests"
	kindDocs         = "docs"
	kindConfig       = "config"
	kindBuild        = "build"
	kindDependencies = "dependencies"
	kindGenerated    = "generated"
	kindOther        = "other"
)

// kindOrder is the order of the groups of a walkthrough built from the diff.
var kindOrder = []string{kindSource, kindTests, kindDocs, kindConfig, kindBuild, kindDependencies, kindGenerated, kindOther}

// fileKind says what kind of file f is, from its path, its language and
// the planner's generated-code checks.
func fileKind(f *diff.File) string {
	p := f.Path()
	lp := strings.ToLower(p)
	base := path.Base(lp)
	l := lang.Detect(p)
	switch {
	case isLockfile(path.Base(p)) || isDependencyManifest(base):
		return kindDependencies
	case isVendored(p) || isGenerated(f):
		return kindGenerated
	case isTestPath(lp, base):
		return kindTests
	case isDocPath(lp, base):
		return kindDocs
	case isBuildPath(lp, base, l):
		return kindBuild
	case isConfigPath(base):
		return kindConfig
	case l != "" && !f.Binary:
		return kindSource
	}
	return kindOther
}

// isDependencyManifest reports whether base names a package manifest.
func isDependencyManifest(base string) bool {
	switch base {
	case "go.mod", "go.work", "package.json", "requirements.txt", "pyproject.toml", "pipfile", "setup.py",
		"setup.cfg", "cargo.toml", "gemfile", "composer.json", "pom.xml", "build.gradle", "build.gradle.kts",
		"mix.exs", "pubspec.yaml", "package.swift", "podfile":
		return true
	}
	return strings.HasPrefix(base, "requirements") && strings.HasSuffix(base, ".txt")
}

// isTestPath reports whether a lower-cased path is a test file or lies in
// a test directory.
func isTestPath(lp, base string) bool {
	stem := strings.TrimSuffix(base, path.Ext(base))
	switch {
	case strings.HasSuffix(stem, "_test"), strings.HasSuffix(stem, ".test"), strings.HasSuffix(stem, ".spec"),
		strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py"),
		strings.HasSuffix(stem, "test") && strings.HasSuffix(base, ".java"):
		return true
	}
	for _, dir := range []string{"test/", "tests/", "testdata/", "__tests__/", "spec/", "e2e/"} {
		if strings.HasPrefix(lp, dir) || strings.Contains(lp, "/"+dir) {
			return true
		}
	}
	return false
}

// isDocPath reports whether a lower-cased path is documentation.
func isDocPath(lp, base string) bool {
	switch path.Ext(base) {
	case ".md", ".markdown", ".rst", ".adoc", ".txt":
		return true
	}
	switch base {
	case "license", "copying", "authors", "changelog", "notice":
		return true
	}
	return strings.HasPrefix(lp, "docs/") || strings.HasPrefix(lp, "doc/") || strings.Contains(lp, "/docs/")
}

// isBuildPath reports whether a lower-cased path builds, packages or runs
// CI for the project.
func isBuildPath(lp, base, l string) bool {
	switch l {
	case "dockerfile", "makefile", "cmake":
		return true
	}
	switch base {
	case "jenkinsfile", ".gitlab-ci.yml", "justfile", "taskfile.yml", "goreleaser.yml", ".goreleaser.yml", ".goreleaser.yaml":
		return true
	}
	return strings.HasPrefix(lp, ".github/workflows/") || strings.HasPrefix(lp, ".circleci/") ||
		strings.HasPrefix(lp, "deploy/") || strings.HasPrefix(lp, "scripts/") || strings.HasPrefix(lp, "build/")
}

// isConfigPath reports whether base is a configuration file.
func isConfigPath(base string) bool {
	switch path.Ext(base) {
	case ".yml", ".yaml", ".toml", ".ini", ".cfg", ".conf", ".json", ".properties", ".env", ".editorconfig":
		return true
	}
	return strings.HasPrefix(base, ".") && !strings.Contains(strings.TrimPrefix(base, "."), ".")
}

// diffWalkthrough builds the walkthrough of d from the diff alone: the
// files grouped by kind, each with its change, language and size.
func diffWalkthrough(d *diff.Diff) *review.Walkthrough {
	byKind := map[string][]review.WalkthroughFile{}
	adds, dels := 0, 0
	for _, f := range d.Files {
		k := fileKind(f)
		byKind[k] = append(byKind[k], walkthroughFile(f))
		adds += f.Additions
		dels += f.Deletions
	}
	w := &review.Walkthrough{Source: review.WalkthroughFromDiff, Groups: []review.WalkthroughGroup{}}
	var parts []string
	for _, k := range kindOrder {
		if files := byKind[k]; len(files) > 0 {
			w.Groups = append(w.Groups, review.WalkthroughGroup{Name: k, Files: files})
			parts = append(parts, fmt.Sprintf("%d %s", len(files), k))
		}
	}
	w.Summary = fmt.Sprintf("Changes %d file(s), +%d −%d", len(d.Files), adds, dels)
	if len(parts) > 0 {
		w.Summary += ": " + strings.Join(parts, ", ")
	}
	w.Summary += "."
	return w
}

// walkthroughFile is f's entry, with the line the diff alone gives it.
func walkthroughFile(f *diff.File) review.WalkthroughFile {
	wf := review.WalkthroughFile{
		FilePath: f.Path(), ChangeType: string(f.Status), Language: lang.Detect(f.Path()),
		Additions: f.Additions, Deletions: f.Deletions, Binary: f.Binary,
	}
	if (f.Status == diff.Renamed || f.Status == diff.Copied) && f.OldPath != "" {
		wf.OldPath = f.OldPath
	}
	wf.Line = diffLine(wf)
	return wf
}

// diffLine describes a file's change from its stats: "modified go file,
// +3 −1", "renamed a.go → b.go, +0 −0", "added binary file".
func diffLine(wf review.WalkthroughFile) string {
	what := "file"
	switch {
	case wf.Binary:
		what = "binary file"
	case wf.Language != "":
		what = wf.Language + " file"
	}
	s := wf.ChangeType + " " + what
	if wf.OldPath != "" {
		s += ": " + wf.OldPath + " → " + wf.FilePath
	}
	if !wf.Binary {
		s += fmt.Sprintf(", +%d −%d", wf.Additions, wf.Deletions)
	}
	return s
}
