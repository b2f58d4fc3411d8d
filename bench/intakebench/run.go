package intakebench

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mergeguard/mergeguard/bench/internal/measure"
	"github.com/mergeguard/mergeguard/server/store"
)

// Config is one comparison.
type Config struct {
	// ServerCommand starts an intake process: the impl, database URL and
	// secret are appended as -impl, -db and -secret flags.
	ServerCommand []string
	// PostgresURL is a PostgreSQL server the comparison creates its
	// database on (and drops it from afterwards).
	PostgresURL string
	Payload     []byte // the pull_request delivery every payload is made from
	Pulls       int    // distinct pull requests
	Warmup      int    // deliveries sent before measuring
	Levels      []Level
	// Rounds is how many times each intake runs every level, the two
	// taking turns, each round in a process of its own (0 is 1). Each
	// figure of Comparison.Levels is the median of its rounds'.
	Rounds int
}

// Comparison is both intakes under every level, and the database's
// durability settings.
type Comparison struct {
	// Durability is PostgreSQL's fsync, synchronous_commit and
	// full_page_writes, as "fsync=on synchronous_commit=on ...".
	Durability   string `json:"postgres_durability"`
	PayloadBytes int    `json:"payload_bytes"`
	// Levels holds, for each level, the median of each figure over the
	// rounds, and the ratios of those medians.
	Levels []LevelPair `json:"levels"`
	// Rounds holds every round's levels.
	Rounds [][]LevelPair `json:"rounds"`
}

// LevelPair is one level: MergeGuard, the anchor and their ratios.
type LevelPair struct {
	MergeGuard Result `json:"mergeguard"`
	Anchor     Result `json:"go_githubapp"`
	// Throughput is MergeGuard's deliveries/s over the anchor's; P99 and
	// CPU are MergeGuard's p99 latency and CPU per delivery over the
	// anchor's.
	Throughput float64 `json:"throughput_ratio"`
	P99        float64 `json:"p99_ratio"`
	CPU        float64 `json:"cpu_ratio"`
	// Switches is MergeGuard's context switches per delivery over the
	// anchor's.
	Switches float64 `json:"context_switches_ratio"`
	// Stored is how many of MergeGuard's deliveries answered 200 the
	// database holds; it must equal the deliveries less the errors.
	Stored int `json:"mergeguard_stored"`
}

// Run measures both intakes: cfg.Rounds rounds, in each of which the
// anchor and then MergeGuard run every level.
func Run(ctx context.Context, cfg Config) (Comparison, error) {
	dbURL, durability, drop, err := database(ctx, cfg.PostgresURL)
	if err != nil {
		return Comparison{}, err
	}
	defer drop()
	secret := fmt.Sprintf("bench-secret-%d", time.Now().UnixNano())
	payloads, err := Payloads(cfg.Payload, cfg.Pulls, secret)
	if err != nil {
		return Comparison{}, err
	}
	cmp := Comparison{Durability: durability, PayloadBytes: len(payloads[0].Body)}
	for round := range max(cfg.Rounds, 1) {
		pairs, err := runRound(ctx, cfg, round, dbURL, secret, payloads)
		if err != nil {
			return cmp, err
		}
		cmp.Rounds = append(cmp.Rounds, pairs)
	}
	cmp.Levels = medianPairs(cmp.Rounds)
	return cmp, nil
}

// runRound runs every level on both intakes and checks that MergeGuard
// stored exactly the deliveries it acknowledged.
func runRound(ctx context.Context, cfg Config, round int, dbURL, secret string, payloads []Payload) ([]LevelPair, error) {
	pairs := make([]LevelPair, len(cfg.Levels))
	for _, impl := range []string{GitHubApp, MergeGuard} {
		results, err := runImpl(ctx, cfg, impl, round, dbURL, secret, payloads)
		if err != nil {
			return nil, err
		}
		for i, r := range results {
			if impl == MergeGuard {
				pairs[i].MergeGuard = r
			} else {
				pairs[i].Anchor = r
			}
		}
	}
	for i := range pairs {
		p := &pairs[i]
		p.ratios()
		var err error
		if p.Stored, err = stored(ctx, dbURL, levelPrefix(MergeGuard, round, i)); err != nil {
			return nil, err
		}
		if want := p.MergeGuard.Deliveries - p.MergeGuard.Errors; p.Stored != want {
			return nil, fmt.Errorf("intake round %d, level %d: %d deliveries stored, %d acknowledged", round, i, p.Stored, want)
		}
	}
	return pairs, nil
}

// ratios sets p's ratios from its results.
func (p *LevelPair) ratios() {
	p.Throughput = measure.Ratio(p.MergeGuard.PerSecond, p.Anchor.PerSecond)
	p.P99 = measure.Ratio(p.MergeGuard.P99MS, p.Anchor.P99MS)
	p.CPU = measure.Ratio(p.MergeGuard.CPUMSPerDelivery, p.Anchor.CPUMSPerDelivery)
	p.Switches = measure.Ratio(p.MergeGuard.SwitchesPerDelivery, p.Anchor.SwitchesPerDelivery)
}

// medianPairs is, for each level, the median of each figure of rounds on
// each side (and of the stored counts), with the ratios of the medians.
func medianPairs(rounds [][]LevelPair) []LevelPair {
	if len(rounds) == 0 {
		return nil
	}
	out := make([]LevelPair, len(rounds[0]))
	for i := range out {
		var ours, anchor []Result
		var storedCounts []float64
		for _, r := range rounds {
			ours, anchor = append(ours, r[i].MergeGuard), append(anchor, r[i].Anchor)
			storedCounts = append(storedCounts, float64(r[i].Stored))
		}
		out[i] = LevelPair{MergeGuard: medianResult(ours), Anchor: medianResult(anchor), Stored: int(median(storedCounts))}
		out[i].ratios()
	}
	return out
}

// medianResult is the median of each figure of rs (one level's rounds).
func medianResult(rs []Result) Result {
	of := func(f func(Result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		return median(v)
	}
	return Result{
		Senders: rs[0].Senders, Offered: rs[0].Offered,
		Deliveries:          int(of(func(r Result) float64 { return float64(r.Deliveries) })),
		Errors:              int(of(func(r Result) float64 { return float64(r.Errors) })),
		Seconds:             of(func(r Result) float64 { return r.Seconds }),
		PerSecond:           of(func(r Result) float64 { return r.PerSecond }),
		P50MS:               of(func(r Result) float64 { return r.P50MS }),
		P99MS:               of(func(r Result) float64 { return r.P99MS }),
		MaxMS:               of(func(r Result) float64 { return r.MaxMS }),
		CPUMSPerDelivery:    of(func(r Result) float64 { return r.CPUMSPerDelivery }),
		SwitchesPerDelivery: of(func(r Result) float64 { return r.SwitchesPerDelivery }),
	}
}

// median is the middle value of v (the mean of the two middle ones when
// there are an even number); v is sorted in place.
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func levelPrefix(impl string, round, level int) string {
	return fmt.Sprintf("%s-round%d-level%d-", impl, round, level)
}

// runImpl starts impl's intake process and runs the warm-up and levels.
func runImpl(ctx context.Context, cfg Config, impl string, round int, dbURL, secret string, payloads []Payload) ([]Result, error) {
	args := append(cfg.ServerCommand[1:len(cfg.ServerCommand):len(cfg.ServerCommand)], "-impl", impl, "-db", dbURL, "-secret", secret)
	cmd := exec.CommandContext(ctx, cfg.ServerCommand[0], args...) //nolint:gosec // the suite's own binary, arguments passed without a shell
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", impl, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", impl, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", impl, err)
	}
	defer func() {
		_ = stdin.Close() // the server ends when its stdin closes
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("%s: the intake did not start: %w", impl, err)
	}
	base := strings.TrimSpace(line)
	warm := Level{Senders: 10, Max: cfg.Warmup, MaxDuration: time.Minute}
	if _, err := Load(ctx, base, payloads, fmt.Sprintf("%s-round%d-warmup-", impl, round), warm); err != nil {
		return nil, fmt.Errorf("%s warm-up: %w", impl, err)
	}
	var out []Result
	for i, lvl := range cfg.Levels {
		r, err := Load(ctx, base, payloads, levelPrefix(impl, round, i), lvl)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", impl, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// database creates and migrates a database of its own on the server at
// serverURL; drop removes it.
func database(ctx context.Context, serverURL string) (dbURL, durability string, drop func(), err error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", "", nil, fmt.Errorf("postgres URL: %w", err)
	}
	admin, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return "", "", nil, fmt.Errorf("postgres: %w", err)
	}
	var settings []string
	for _, name := range []string{"fsync", "synchronous_commit", "full_page_writes"} {
		var v string
		if err := admin.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err != nil {
			_ = admin.Close(ctx)
			return "", "", nil, fmt.Errorf("postgres: %w", err)
		}
		settings = append(settings, name+"="+v)
	}
	name := fmt.Sprintf("mergeguard_bench_%d", time.Now().UnixNano())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		_ = admin.Close(ctx)
		return "", "", nil, fmt.Errorf("postgres: %w", err)
	}
	drop = func() {
		_, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		_ = admin.Close(context.Background())
	}
	u.Path = "/" + name
	if err := store.MigrateUp(ctx, u.String()); err != nil {
		drop()
		return "", "", nil, fmt.Errorf("migrate: %w", err)
	}
	return u.String(), strings.Join(settings, " "), drop, nil
}

// stored counts the deliveries the database holds whose id starts with prefix.
func stored(ctx context.Context, dbURL, prefix string) (int, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	defer func() { _ = conn.Close(ctx) }()
	var n int
	err = conn.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE delivery_id LIKE $1`, prefix+"%").Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	return n, nil
}
