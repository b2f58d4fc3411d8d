package experiment_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review/experiment"
)

// split counts the arms Choose gives pull requests 1..n of each of repos.
func split(arms []config.Experiment, repos []string, n int) map[string]int {
	got := map[string]int{}
	for _, repo := range repos {
		for number := 1; number <= n; number++ {
			got[experiment.Choose(arms, repo, number)]++
		}
	}
	return got
}

// TestChooseSplitsByShare: 100 and 1,000 pull requests are split within
// ±10 points of each configured share (absolute: 0.10 of the pull
// requests), every arm and the default arm alike.
func TestChooseSplitsByShare(t *testing.T) {
	t.Parallel()
	two := []config.Experiment{{Name: "b", Model: "gpt-4o", Share: 0.5}}
	three := []config.Experiment{{Name: "b", Model: "gpt-4o", Share: 0.2}, {Name: "c", Model: "m", Prompt: "focused", Share: 0.3}}
	small := []config.Experiment{{Name: "b", Model: "gpt-4o", Share: 0.1}}
	tests := []struct {
		name  string
		arms  []config.Experiment
		repos []string
		n     int
	}{
		{"half, 100 pull requests", two, []string{"acme/shop"}, 100},
		{"half, 1000 pull requests", two, []string{"acme/shop"}, 1000},
		{"half, 100 across 4 repositories", two, []string{"a/a", "a/b", "b/a", "Acme/Shop"}, 25},
		{"three arms, 100 pull requests", three, []string{"acme/shop"}, 100},
		{"three arms, 1000 pull requests", three, []string{"acme/shop"}, 1000},
		{"a tenth, 100 pull requests", small, []string{"acme/api"}, 100},
		{"a tenth, 1000 pull requests", small, []string{"acme/api"}, 1000},
		{"none", nil, []string{"acme/shop"}, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := split(tt.arms, tt.repos, tt.n)
			total := float64(tt.n * len(tt.repos))
			want := map[string]float64{config.DefaultArm: 1}
			for _, a := range tt.arms {
				want[a.Name] = a.Share
				want[config.DefaultArm] -= a.Share
			}
			for arm, share := range want {
				if f := float64(got[arm]) / total; math.Abs(f-share) > 0.10 {
					t.Errorf("arm %s: %.3f of the pull requests, want %.2f ± 0.10 (split %v)", arm, f, share, got)
				}
			}
			if len(got) > len(want) {
				t.Errorf("arms %v, want only %v", got, want)
			}
			t.Logf("split %v of %d pull requests", got, int(total))
		})
	}
}

// TestChooseIsStable: every run on a pull request (each push, rerun,
// answer: a call of Choose, in any order, in another process) gets the
// same arm, so no pull request is reviewed by two arms; the arm depends on
// the repository and the number, not on the order of the calls.
func TestChooseIsStable(t *testing.T) {
	t.Parallel()
	arms := []config.Experiment{{Name: "b", Model: "gpt-4o", Share: 0.5}}
	first := map[string]string{}
	for push := range 5 {
		for number := 1; number <= 100; number++ {
			n := number
			if push%2 == 1 { // the pushes of odd rounds come in reverse order
				n = 101 - number
			}
			key := fmt.Sprintf("acme/shop#%d", n)
			arm := experiment.Choose(arms, "acme/shop", n)
			if prev, ok := first[key]; ok && prev != arm {
				t.Fatalf("%s: push %d reviewed by %s, an earlier one by %s", key, push, arm, prev)
			}
			first[key] = arm
		}
	}
	// Fixed values: a change of the hash would move open pull requests
	// between arms.
	want := map[string]string{"acme/shop#1": "b", "acme/shop#2": "b", "acme/shop#3": "b", "acme/shop#4": "default"}
	got := map[string]string{}
	for k := range want {
		got[k] = first[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("arms (-want +got):\n%s", diff)
	}
}

// TestChooseAppendedArmTakesFromDefault: an arm appended to the list, or
// the last arm's share grown, takes pull requests from the default arm
// only: a pull request of an earlier arm keeps it.
func TestChooseAppendedArmTakesFromDefault(t *testing.T) {
	t.Parallel()
	before := []config.Experiment{{Name: "b", Model: "gpt-4o", Share: 0.2}}
	after := []config.Experiment{{Name: "b", Model: "gpt-4o", Share: 0.2}, {Name: "c", Model: "gpt-4.1", Share: 0.3}}
	grown := []config.Experiment{{Name: "b", Model: "gpt-4o", Share: 0.4}}
	for number := 1; number <= 1000; number++ {
		was := experiment.Choose(before, "acme/shop", number)
		for _, arms := range [][]config.Experiment{after, grown} {
			if now := experiment.Choose(arms, "acme/shop", number); was != config.DefaultArm && now != was {
				t.Errorf("#%d moved from %s to %s", number, was, now)
			}
		}
	}
}

func TestPoint(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		repo   string
		number int
	}{{"acme/shop", 1}, {"acme/shop", 2}, {"", 0}, {"a/b", 1 << 30}} {
		p := experiment.Point(tt.repo, tt.number)
		if p < 0 || p >= 1 {
			t.Errorf("Point(%q, %d) = %v, not in [0, 1)", tt.repo, tt.number, p)
		}
		if q := experiment.Point(tt.repo, tt.number); q != p {
			t.Errorf("Point(%q, %d) = %v then %v", tt.repo, tt.number, p, q)
		}
	}
	if experiment.Point("Acme/Shop", 7) != experiment.Point("acme/shop", 7) {
		t.Error("Point depends on the case of the repository's name (GitHub's names are case-insensitive)")
	}
}
