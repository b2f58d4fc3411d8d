package github

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
)

func newTestSource(t *testing.T, pr githubtest.PR) (*githubtest.Server, *Source, githubtest.PR) {
	t.Helper()
	fake := githubtest.New(t)
	pr = fake.AddPR(pr)
	return fake, NewSource(fake.Client(), fake.V4Client(), pr.Owner, pr.Repo, pr.Number, SourceOptions{}), pr
}

// TestSourceFullReviewCalls reads a 20-file pull request the way a review
// does and counts the API calls: the fixed reads (pull request, diff,
// files, commits, base tree, head tree for listing, archive) plus one call
// per file whose content or blame is read.
func TestSourceFullReviewCalls(t *testing.T) {
	fake, src, pr := newTestSource(t, testPR(20))
	ctx := t.Context()

	change, err := src.Change(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := review.Change{
		Repository: "acme/widgets", Number: 7, URL: "https://github.com/acme/widgets/pull/7",
		Title: "Compute the widgets", Body: "Replaces constants.", Author: "octocat",
		Labels: []string{"enhancement"}, BaseRef: "main", HeadRef: "feature",
		BaseSHA: pr.BaseSHA, HeadSHA: pr.HeadSHA,
	}
	if d := cmp.Diff(want, change); d != "" {
		t.Errorf("Change (-want +got):\n%s", d)
	}
	text, err := src.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if text != pr.Diff {
		t.Error("Diff is not the pull request's raw diff")
	}
	files, err := src.Files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 20 {
		t.Fatalf("Files: %d files, want 20", len(files))
	}
	if _, err := src.Commits(ctx, 20); err != nil {
		t.Fatal(err)
	}
	// The conventions are read at base: the base tree says that none of
	// them exists.
	for _, p := range []string{".mergeguard.yml", "AGENTS.md", "CONTRIBUTING.md"} {
		if _, err := src.ReadFile(ctx, p, review.Base); !errors.Is(err, review.ErrNotFound) {
			t.Fatalf("ReadFile(%s, base): %v, want ErrNotFound", p, err)
		}
	}
	readAll := func(rev review.Revision, contents map[string]string, paths ...string) {
		t.Helper()
		for i, p := range paths {
			b, err := src.ReadFile(ctx, p, rev)
			if err != nil {
				t.Fatalf("ReadFile(%s, %s) #%d: %v", p, rev, i, err)
			}
			if string(b) != contents[p] {
				t.Errorf("ReadFile(%s, %s) = %.40q..., want the %s content", p, rev, b, rev)
			}
		}
	}
	// The reviewer reads five changed files at head (one of them twice)
	// and two at base, and blames two lines of one file and one of another.
	readAll(review.Head, pr.Head, "pkg/p00/file.go", "pkg/p01/file.go", "pkg/p02/file.go", "pkg/p03/file.go", "internal/new.go", "pkg/p00/file.go")
	readAll(review.Base, pr.Base, "pkg/p00/file.go", "internal/delete.go")
	for _, q := range []struct {
		path string
		line int
	}{{"pkg/p00/file.go", 10}, {"pkg/p00/file.go", 3}, {"pkg/p01/file.go", 10}} {
		if _, err := src.Blame(ctx, q.path, q.line); err != nil {
			t.Fatalf("Blame(%s, %d): %v", q.path, q.line, err)
		}
	}
	// Listing fetches the head tree; later head reads use it: a file
	// already read is not fetched again, another is one blob, a missing
	// one costs nothing.
	paths, err := src.ListFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 22 { // 18 changed Go files, README, guide, keep.go, new.go
		t.Errorf("ListFiles: %d paths, want 22: %v", len(paths), paths)
	}
	readAll(review.Head, pr.Head, "pkg/p00/file.go", "pkg/p04/file.go")
	if _, err := src.ReadFile(ctx, "pkg/none.go", review.Head); !errors.Is(err, review.ErrNotFound) {
		t.Errorf("ReadFile of a missing file after ListFiles: %v, want ErrNotFound", err)
	}
	// Searching reads every file: one archive instead of a call each.
	if err := src.Preload(ctx); err != nil {
		t.Fatal(err)
	}
	readAll(review.Head, pr.Head, paths...)

	counts := map[string]int{}
	for _, c := range fake.Calls() {
		counts[c.Route]++
	}
	wantCounts := map[string]int{
		githubtest.RoutePull:        2, // metadata and raw diff (same route, Accept differs)
		githubtest.RoutePullFiles:   1,
		githubtest.RoutePullCommits: 1,
		githubtest.RouteTree:        2, // base, then head for ListFiles
		githubtest.RouteContents:    5, // 5 distinct head files before the head tree
		githubtest.RouteBlob:        3, // 2 base files, 1 head file after the head tree
		githubtest.RouteGraphQL:     2, // one blame per file
		githubtest.RouteTarball:     1,
		githubtest.RouteCodeload:    1, // the download, outside the API
	}
	if d := cmp.Diff(wantCounts, counts); d != "" {
		t.Errorf("calls by route (-want +got):\n%s", d)
	}
	perFile := counts[githubtest.RouteContents] + counts[githubtest.RouteBlob] + counts[githubtest.RouteGraphQL]
	fixed := fake.APICallCount() - perFile
	t.Logf("API calls: %d in all, %d fixed reads, %d file reads (contents or blob), %d blame queries, for 8 files read and %d searched",
		fake.APICallCount(), fixed, counts[githubtest.RouteContents]+counts[githubtest.RouteBlob], counts[githubtest.RouteGraphQL], len(paths))
	if fixed > 8 {
		t.Errorf("fixed reads made %d API calls, want at most 8", fixed)
	}
}

func TestSourceReadFileOnceConcurrently(t *testing.T) {
	fake, src, pr := newTestSource(t, testPR(4))
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for range 10 {
		wg.Go(func() {
			b, err := src.ReadFile(t.Context(), "pkg/p00/file.go", review.Head)
			if err == nil && string(b) != pr.Head["pkg/p00/file.go"] {
				err = errors.New("wrong content")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := fake.CallCount(githubtest.RouteContents); n != 1 {
		t.Errorf("file fetched %d times, want 1", n)
	}
	if n := fake.CallCount(githubtest.RoutePull); n != 1 {
		t.Errorf("pull request fetched %d times, want 1", n)
	}
	if n := fake.APICallCount(); n != 2 {
		t.Errorf("%d API calls, want 2 (the pull request and the file)", n)
	}
}

// Once both trees are at hand, a file unchanged between base and head is
// one blob, fetched once.
func TestSourceSameBlobAtBothRevisionsFetchedOnce(t *testing.T) {
	fake, src, pr := newTestSource(t, testPR(4))
	if _, err := src.ListFiles(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, rev := range []review.Revision{review.Head, review.Base} {
		b, err := src.ReadFile(t.Context(), "README.md", rev)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != pr.Head["README.md"] {
			t.Errorf("ReadFile(README.md, %s) = %q", rev, b)
		}
	}
	if n := fake.CallCount(githubtest.RouteBlob); n != 1 {
		t.Errorf("unchanged README.md fetched %d times, want 1 (same blob)", n)
	}
}

func TestSourceDiffTooLargeFallsBackToPatches(t *testing.T) {
	pr := testPR(6)
	pr.DiffTooLarge = true
	pr.MissingPatches = []string{"pkg/p01/file.go"}
	fake, src, pr := newTestSource(t, pr)

	text, err := src.Diff(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got, err := diff.ParseString(text)
	if err != nil {
		t.Fatalf("fallback diff does not parse: %v\n%s", err, text)
	}
	want, err := diff.ParseString(pr.Diff)
	if err != nil {
		t.Fatal(err)
	}
	// The file without a patch is read back from both sides (hidden.go):
	// its diff is the one GitHub would have shown, and it takes no inline
	// comments.
	if d := cmp.Diff(want, got, cmpopts.IgnoreFields(diff.File{}, "DiffBytes", "OldMode", "NewMode"), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("fallback diff (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]bool{"pkg/p01/file.go": true}, src.hiddenFiles()); d != "" {
		t.Errorf("files read back (-want +got):\n%s", d)
	}
	files, err := src.Files(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, f := range files {
		if f.PatchMissing {
			missing = append(missing, f.Path)
		}
	}
	if d := cmp.Diff([]string{"pkg/p01/file.go"}, missing); d != "" {
		t.Errorf("PatchMissing files (-want +got):\n%s", d)
	}
	if n := fake.CallCount(githubtest.RoutePullFiles); n != 1 {
		t.Errorf("files listed %d times, want 1 (shared by Diff and Files)", n)
	}
}

func TestSourceFilesPaged(t *testing.T) {
	pr := testPR(250)
	fake, src, _ := newTestSource(t, pr)
	files, err := src.Files(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 250 {
		t.Errorf("Files: %d, want 250", len(files))
	}
	calls := fake.CallsTo(githubtest.RoutePullFiles)
	if len(calls) != 3 {
		t.Fatalf("files pages fetched: %d, want 3", len(calls))
	}
	for _, c := range calls {
		if c.Query.Get("per_page") != "100" {
			t.Errorf("per_page = %q, want 100", c.Query.Get("per_page"))
		}
	}
}

// TestSourceFilesCapped: the listing stops at MaxFiles, without fetching
// the pages past it.
func TestSourceFilesCapped(t *testing.T) {
	fake := githubtest.New(t)
	pr := fake.AddPR(testPR(250))
	src := NewSource(fake.Client(), fake.V4Client(), pr.Owner, pr.Repo, pr.Number, SourceOptions{MaxFiles: 150})
	files, err := src.Files(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 150 || files[149].Path != "pkg/p149/file.go" {
		t.Errorf("Files: %d, last %q; want 150, the last pkg/p149/file.go", len(files), files[len(files)-1].Path)
	}
	if n := fake.CallCount(githubtest.RoutePullFiles); n != 2 {
		t.Errorf("files pages fetched: %d, want 2", n)
	}
}

func TestSourceCommits(t *testing.T) {
	_, src, pr := newTestSource(t, testPR(3))
	got, err := src.Commits(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []review.Commit{
		{SHA: pr.Commits[1].SHA, Author: "bob", Date: pr.Commits[1].Date, Message: "Compute more"},
		{SHA: pr.HeadSHA, Author: "alice", Date: pr.Commits[2].Date, Message: "Finish"},
	}
	if d := cmp.Diff(want, got, cmpopts.EquateApproxTime(time.Second)); d != "" {
		t.Errorf("Commits(2) (-want +got):\n%s", d)
	}
}

func TestSourceBlame(t *testing.T) {
	fake, src, pr := newTestSource(t, testPR(3))
	old := githubtest.Commit{SHA: "0123456789abcdef0123456789abcdef01234567", Message: "Initial import", Author: "carol", Date: time.Date(2023, 5, 1, 8, 0, 0, 0, time.UTC)}
	fake.SetBlame("acme", "widgets", pr.HeadSHA, "pkg/p00/file.go", []githubtest.BlameRange{
		{StartingLine: 1, EndingLine: 9, Commit: old},
		{StartingLine: 10, EndingLine: 10, Commit: pr.Commits[2]},
		{StartingLine: 11, EndingLine: fileLines, Commit: old},
	})
	got, err := src.Blame(t.Context(), "pkg/p00/file.go", 10)
	if err != nil {
		t.Fatal(err)
	}
	want := review.BlameLine{Author: "alice", Date: pr.Commits[2].Date, CommitSHA: pr.HeadSHA, Message: "Finish"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Blame line 10 (-want +got):\n%s", d)
	}
	got, err = src.Blame(t.Context(), "pkg/p00/file.go", 12)
	if err != nil {
		t.Fatal(err)
	}
	if got.CommitSHA != old.SHA || got.Author != "carol" {
		t.Errorf("Blame line 12 = %+v, want the initial import", got)
	}
	if n := fake.CallCount(githubtest.RouteGraphQL); n != 1 {
		t.Errorf("GraphQL queries: %d, want 1 for one file", n)
	}
	if _, err := src.Blame(t.Context(), "pkg/p00/file.go", 500); !errors.Is(err, review.ErrNotFound) {
		t.Errorf("Blame past the end: %v, want ErrNotFound", err)
	}
	if _, err := src.Blame(t.Context(), "no/such.go", 1); !errors.Is(err, review.ErrNotFound) {
		t.Errorf("Blame of a missing file: %v, want ErrNotFound", err)
	}
	noV4 := NewSource(fake.Client(), nil, "acme", "widgets", 7, SourceOptions{})
	if _, err := noV4.Blame(t.Context(), "pkg/p00/file.go", 10); !errors.Is(err, review.ErrUnsupported) {
		t.Errorf("Blame without GraphQL: %v, want ErrUnsupported", err)
	}
}

func TestSourceNotFound(t *testing.T) {
	tests := []struct {
		name      string
		rev       review.Revision
		listFirst bool // fetch the head tree first
		wantCalls int  // API calls for the reads, after the pull request
	}{
		{name: "head through the contents API", rev: review.Head, wantCalls: 2},
		{name: "head through the listed tree", rev: review.Head, listFirst: true, wantCalls: 0},
		{name: "base through its tree", rev: review.Base, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, src, _ := newTestSource(t, testPR(3))
			if _, err := src.Change(t.Context()); err != nil {
				t.Fatal(err)
			}
			if tt.listFirst {
				if _, err := src.ListFiles(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			before := fake.APICallCount()
			missing := []string{"no/such/file.go", "docs"} // a directory is not a file
			if tt.rev == review.Head {
				missing[0] = "internal/delete.go" // deleted by the pull request
			}
			for _, p := range missing {
				if _, err := src.ReadFile(t.Context(), p, tt.rev); !errors.Is(err, review.ErrNotFound) {
					t.Errorf("ReadFile(%s, %s): %v, want ErrNotFound", p, tt.rev, err)
				}
				if _, err := src.ReadFile(t.Context(), p, tt.rev); !errors.Is(err, review.ErrNotFound) {
					t.Errorf("ReadFile(%s, %s) again: %v, want ErrNotFound", p, tt.rev, err)
				}
			}
			if n := fake.APICallCount() - before; n != tt.wantCalls {
				t.Errorf("%d API calls, want %d (each answer kept)", n, tt.wantCalls)
			}
		})
	}
	fake := githubtest.New(t)
	missing := NewSource(fake.Client(), nil, "acme", "widgets", 99, SourceOptions{})
	if _, err := missing.Change(t.Context()); !errors.Is(err, review.ErrNotFound) {
		t.Errorf("Change of a missing pull request: %v, want ErrNotFound", err)
	}
}

func TestSourceTruncatedTreeUsesContents(t *testing.T) {
	fake, src, pr := newTestSource(t, testPR(3))
	fake.SetTreeLimit(2)
	b, err := src.ReadFile(t.Context(), "pkg/p00/file.go", review.Base)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != pr.Base["pkg/p00/file.go"] {
		t.Error("content read through the contents API differs")
	}
	if n := fake.CallCount(githubtest.RouteContents); n != 1 {
		t.Errorf("contents calls: %d, want 1", n)
	}
	if _, err := src.ReadFile(t.Context(), "no/such/file.go", review.Base); !errors.Is(err, review.ErrNotFound) {
		t.Errorf("ReadFile of a path a truncated tree does not list: %v, want ErrNotFound", err)
	}
}

// A head file above 1 MB, which the contents API serves only raw, is one
// call.
func TestSourceReadsLargeHeadFile(t *testing.T) {
	pr := testPR(3)
	large := strings.Repeat("// a generated line of 32 bytes\n", 50000) // 1.6 MB
	pr.Head["internal/new.go"] = large
	pr.Diff = strings.Replace(pr.Diff, addedDiff("internal/new.go", goFile("new", 12)), addedDiff("internal/new.go", large), 1)
	fake, src, _ := newTestSource(t, pr)
	b, err := src.ReadFile(t.Context(), "internal/new.go", review.Head)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != large {
		t.Errorf("ReadFile of a 1.6 MB file: %d bytes, want %d", len(b), len(large))
	}
	if n := fake.CallCount(githubtest.RouteContents); n != 1 {
		t.Errorf("contents calls: %d, want 1", n)
	}
}

func TestSourcePreloadTooLarge(t *testing.T) {
	fake := githubtest.New(t)
	pr := fake.AddPR(testPR(3))
	src := NewSource(fake.Client(), nil, pr.Owner, pr.Repo, pr.Number, SourceOptions{ArchiveMaxFiles: 3})
	if err := src.Preload(t.Context()); !errors.Is(err, ErrArchiveTooLarge) {
		t.Fatalf("Preload: %v, want ErrArchiveTooLarge", err)
	}
	if err := src.Preload(t.Context()); !errors.Is(err, ErrArchiveTooLarge) {
		t.Fatalf("second Preload: %v, want ErrArchiveTooLarge", err)
	}
	if n := fake.CallCount(githubtest.RouteTarball); n != 1 {
		t.Errorf("tarball requested %d times, want 1", n)
	}
	b, err := src.ReadFile(t.Context(), "pkg/p00/file.go", review.Head)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != pr.Head["pkg/p00/file.go"] {
		t.Error("ReadFile after a refused archive did not read the file")
	}
	if n := fake.CallCount(githubtest.RouteContents); n != 1 {
		t.Errorf("contents calls: %d, want 1", n)
	}

	bySize := NewSource(fake.Client(), nil, pr.Owner, pr.Repo, pr.Number, SourceOptions{ArchiveMaxBytes: 200})
	if err := bySize.Preload(t.Context()); !errors.Is(err, ErrArchiveTooLarge) {
		t.Fatalf("Preload with a 200 byte cap: %v, want ErrArchiveTooLarge", err)
	}
}

func TestSourceRetriesAfterTransientError(t *testing.T) {
	fake, src, _ := newTestSource(t, testPR(3))
	fake.FailNext(githubtest.RoutePull, 500, nil)
	if _, err := src.Change(t.Context()); err == nil {
		t.Fatal("Change succeeded through an injected 500")
	}
	if _, err := src.Change(t.Context()); err != nil {
		t.Fatalf("Change after a 500 was cached: %v", err)
	}
	if n := fake.CallCount(githubtest.RoutePull); n != 2 {
		t.Errorf("pull request fetched %d times, want 2", n)
	}
}
