package diffbench

import (
	"strings"
	"testing"
)

func TestImplementationsAgree(t *testing.T) {
	fixtures, err := Fixtures("../testdata/diffs")
	if err != nil {
		t.Fatal(err)
	}
	impls := append(Impls(), OursReader())
	for _, in := range []Input{fixtures, Synthetic(20, 3)} {
		if err := Check(in, impls); err != nil {
			t.Errorf("%s: %v", in.Name, err)
		}
	}
}

// TestSummaryOfTheFixtures pins what MergeGuard reads of the fixtures, so
// that an agreement of four empty readings cannot pass.
func TestSummaryOfTheFixtures(t *testing.T) {
	fixtures, err := Fixtures("../testdata/diffs")
	if err != nil {
		t.Fatal(err)
	}
	files, added, deleted, right := 0, 0, 0, 0
	for _, d := range fixtures.Diffs {
		s, err := summarizeOurs(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range s {
			files, added, deleted, right = files+1, added+f.Added, deleted+f.Deleted, right+len(f.RightCommentable)
		}
	}
	if files != 245 || added != 2762 || deleted != 9019 || right != 7715 {
		t.Errorf("fixtures: %d files, +%d -%d, %d RIGHT lines; want 245, +2762 -9019, 7715", files, added, deleted, right)
	}
}

func TestCompare(t *testing.T) {
	base := Summary{{Path: "a.go", Added: 2, Deleted: 1, RightCommentable: []int{1, 2, 3}}}
	tests := []struct {
		name string
		got  Summary
		want string // a part of the difference reported; "" for none
	}{
		{"same", Summary{{Path: "a.go", Added: 2, Deleted: 1, RightCommentable: []int{1, 2, 3}}}, ""},
		{"path", Summary{{Path: "b.go", Added: 2, Deleted: 1, RightCommentable: []int{1, 2, 3}}}, `"b.go"`},
		{"counts", Summary{{Path: "a.go", Added: 3, Deleted: 1, RightCommentable: []int{1, 2, 3}}}, "+3 -1"},
		{"lines", Summary{{Path: "a.go", Added: 2, Deleted: 1, RightCommentable: []int{1, 2, 4}}}, "commentable"},
		{"files", nil, "0 files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compare(base, tt.got)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("Compare = %q, want one with %q", got, tt.want)
			}
		})
	}
}

func TestRunTimesEveryImplementation(t *testing.T) {
	rows, err := Run(Synthetic(5, 2), Impls(), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[0].Ratio != 1 {
		t.Fatalf("rows = %+v, want 4 with MergeGuard's ratio 1", rows)
	}
	for _, r := range rows {
		if r.NsPerOp <= 0 || r.MBPerS <= 0 {
			t.Errorf("%s: %v ns/op, %v MB/s", r.Impl, r.NsPerOp, r.MBPerS)
		}
	}
}
