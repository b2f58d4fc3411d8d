package budget

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWindows(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		interest []int
		radius   int
		want     []string // Marker stands for a marker piece
	}{
		{"one window in the middle", 20, []int{10}, 2, []string{"...", "l8", "l9", "l10", "l11", "l12", "..."}},
		{"window at the start", 10, []int{1}, 2, []string{"l1", "l2", "l3", "..."}},
		{"window at the end", 10, []int{10}, 2, []string{"...", "l8", "l9", "l10"}},
		{"overlapping windows merge", 20, []int{5, 8}, 2, []string{"...", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10", "..."}},
		{"touching windows merge", 20, []int{5, 10}, 2, []string{"...", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10", "l11", "l12", "..."}},
		{"a one-line gap is kept", 20, []int{5, 11}, 2, []string{"...", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10", "l11", "l12", "l13", "..."}},
		{"two windows", 30, []int{5, 20}, 1, []string{"...", "l4", "l5", "l6", "...", "l19", "l20", "l21", "..."}},
		{"radius zero", 5, []int{3}, 0, []string{"...", "l3", "..."}},
		{"out of range ignored", 5, []int{0, 9, 3}, 0, []string{"...", "l3", "..."}},
		{"unsorted duplicates", 9, []int{8, 2, 2}, 0, []string{"...", "l2", "...", "l8", "..."}},
		{"everything kept", 5, []int{3}, 10, []string{"l1", "l2", "l3", "l4", "l5"}},
		{"no interest", 5, nil, 10, []string{"..."}},
		{"no lines", 0, []int{1}, 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := make([]string, tt.n)
			for i := range lines {
				lines[i] = fmt.Sprintf("l%d", i+1)
			}
			var want []piece
			for _, l := range tt.want {
				want = append(want, piece{text: l, marker: l == Marker})
			}
			got := windows(lines, nil, 0, tt.interest, tt.radius)
			if d := cmp.Diff(want, got, cmp.AllowUnexported(piece{})); d != "" {
				t.Errorf("pieces (-want +got):\n%s", d)
			}
		})
	}
}
