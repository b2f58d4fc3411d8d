package intakebench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// serverEnv makes the test binary an intake process (Serve), as the
// suite's binary is with "intake-server".
const serverEnv = "INTAKEBENCH_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		flag.Parse()
		fs := flag.NewFlagSet("intake-server", flag.ExitOnError)
		impl, db, secret := fs.String("impl", "", ""), fs.String("db", "", ""), fs.String("secret", "", "")
		_ = fs.Parse(flag.Args())
		if err := Serve(context.Background(), *impl, *db, *secret, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRun is a small comparison in two rounds: both intakes start,
// answer every delivery, report their CPU and context switches, and MergeGuard stores each
// acknowledged delivery once, in every round.
func TestRun(t *testing.T) {
	pg := os.Getenv("MERGEGUARD_BENCH_DATABASE_URL")
	if pg == "" {
		pg = os.Getenv("MERGEGUARD_TEST_DATABASE_URL")
	}
	if pg == "" {
		t.Skip("no PostgreSQL: run under scripts/with-postgres.sh")
	}
	payload, err := os.ReadFile("../testdata/webhooks/pull_request.opened.payload.json")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(serverEnv, "1")
	c, err := Run(t.Context(), Config{
		ServerCommand: []string{os.Args[0], "-test.run=^$", "--"}, PostgresURL: pg, Payload: payload, Pulls: 20, Warmup: 10,
		Levels: []Level{
			{Senders: 5, Max: 60, MaxDuration: 20 * time.Second},
			{Senders: 5, Rate: 100, Max: 30, MaxDuration: 20 * time.Second},
		},
		Rounds: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.PayloadBytes < 27000 || len(c.Levels) != 2 || len(c.Rounds) != 2 {
		t.Fatalf("comparison = %+v", c)
	}
	for r, levels := range c.Rounds {
		for i, p := range levels {
			if p.Stored != p.MergeGuard.Deliveries {
				t.Errorf("round %d, level %d: %d stored of %d", r, i, p.Stored, p.MergeGuard.Deliveries)
			}
		}
	}
	for i, p := range c.Levels {
		for name, r := range map[string]Result{"mergeguard": p.MergeGuard, "go-githubapp": p.Anchor} {
			if r.Deliveries == 0 || r.Errors != 0 || r.PerSecond <= 0 || r.CPUMSPerDelivery <= 0 || r.SwitchesPerDelivery <= 0 {
				t.Errorf("level %d, %s: %+v", i, name, r)
			}
		}
		if p.Stored != p.MergeGuard.Deliveries {
			t.Errorf("level %d: %d stored of %d", i, p.Stored, p.MergeGuard.Deliveries)
		}
	}
}

// TestMedianPairs: each figure of a level is the median of its rounds',
// side by side, and the ratios are those of the medians.
func TestMedianPairs(t *testing.T) {
	round := func(ours, anchor float64) []LevelPair {
		return []LevelPair{{
			MergeGuard: Result{Senders: 50, Deliveries: 100, PerSecond: 1000 / ours, CPUMSPerDelivery: ours, P99MS: ours, SwitchesPerDelivery: 20 * ours},
			Anchor:     Result{Senders: 50, Deliveries: 100, PerSecond: 1000 / anchor, CPUMSPerDelivery: anchor, P99MS: anchor, SwitchesPerDelivery: 20 * anchor},
			Stored:     100,
		}}
	}
	got := medianPairs([][]LevelPair{round(0.7, 0.3), round(0.6, 0.45), round(0.65, 0.35)})
	want := []LevelPair{{
		MergeGuard: Result{Senders: 50, Deliveries: 100, PerSecond: 1000 / 0.65, CPUMSPerDelivery: 0.65, P99MS: 0.65, SwitchesPerDelivery: 13},
		Anchor:     Result{Senders: 50, Deliveries: 100, PerSecond: 1000 / 0.35, CPUMSPerDelivery: 0.35, P99MS: 0.35, SwitchesPerDelivery: 7},
		Stored:     100,
		Throughput: 0.35 / 0.65, P99: 0.65 / 0.35, CPU: 0.65 / 0.35, Switches: 13.0 / 7,
	}}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("medianPairs (-want +got):\n%s", diff)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of 1..4 = %v, want 2.5", m)
	}
}

func TestPayloadsAreSignedVariants(t *testing.T) {
	ps, err := Payloads([]byte(`{"action":"opened","number":1,"pull_request":{"number":1}}`), 3, "s")
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"action\": \"opened\",\n  \"number\": 3,\n  \"pull_request\": {\n    \"number\": 3\n  }\n}"
	if len(ps) != 3 || string(ps[2].Body) != want || ps[0].Signature == ps[1].Signature {
		t.Errorf("payloads = %q; want 3 distinct, the last %s", ps, want)
	}
	if _, err := Payloads([]byte(`{"number":1}`), 1, "s"); err == nil {
		t.Error("a payload without pull_request was accepted")
	}
}
