# MergeGuard. `make run` runs it, `make test` tests it.

GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := bin/golangci-lint-$(GOLANGCI_LINT_VERSION)

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

# The tests and the linter run with GOGC=400 unless GOGC is set: the
# collector took a fifth of make test-short's CPU (the go side: 113 -> 87
# CPU-seconds). The tests that bound the heap set the collector's defaults
# themselves (allocs.HeapPeak does); make run keeps Go's default.
test test-short lint: export GOGC ?= 400

# The go command links each test binary in its work directory (GOTMPDIR),
# 1.3 GB written and removed per run: in memory when scripts/memory-dir.sh
# finds room there, unless GOTMPDIR is set (make test-short: 3.5 CPU-seconds
# of the kernel's ext4 work less, about 3 s).
test test-short: export GOTMPDIR ?= $(shell bash scripts/memory-dir.sh)

.PHONY: run run-notice test test-short lint bench bench-peers soak build fmt eval eval-real

## run: serve on :8080; without DATABASE_URL, start the dev PostgreSQL in .mergeguard/pg;
## serve prints "MergeGuard is running: open URL" (the sign-in link) once it listens
run: run-notice build
	@if [ -z "$${DATABASE_URL:-}" ]; then \
		DATABASE_URL=$$(bash scripts/dev-postgres.sh) || exit 1; \
		export DATABASE_URL; \
		echo "DATABASE_URL=$$DATABASE_URL (stop it with: bash scripts/dev-postgres.sh stop)" >&2; \
	fi; \
	echo "Starting MergeGuard: it prints \"MergeGuard is running: open ...\" once it serves (bin/mergeguard token prints the sign-in link again)." >&2; \
	exec bin/mergeguard serve

# run-notice says, before the first build, that it takes a while.
run-notice:
	@[ -x bin/mergeguard ] || echo "Building bin/mergeguard: the first build downloads and compiles the dependencies and takes a few minutes." >&2

## test: go vet, then every test with the race detector against a throwaway PostgreSQL (but
## the packages of $(RACE_FREE), which start no goroutine: without it, but their tests of
## concurrent use), then
## the huge-diff memory bound alone without it (the race detector's collector falls behind)
## and the unknown-model overflow test (400 prompts counted one review after the other:
## ten times slower under the race detector, with nothing to race);
## -parallel 4: the e2e tests (t.Parallel) mostly wait on the binaries they start, so four at
## a time on two cores halve the package's time;
## Chromium is installed for the browser tests (e2e/) unless MERGEGUARD_SKIP_BROWSER=1, and
## shellcheck for the linters' tests (review/lint)
RACE_FREE := scripts/race-free-packages.txt
# race_free_pkgs are its packages; race_free_tests its lines naming tests, as pkg=tests
race_free_pkgs = $(shell awk '!/^\#/ && NF { print $$1 }' $(RACE_FREE))
race_free_tests = $(shell awk '!/^\#/ && NF > 1 { print $$1 "=" $$2 }' $(RACE_FREE))
test:
	go vet ./...
	bash scripts/ensure-shellcheck.sh >/dev/null
	@if [ "$${MERGEGUARD_SKIP_BROWSER:-}" != 1 ]; then bash scripts/ensure-chromium.sh >/dev/null; fi
	CGO_ENABLED=0 GOFLAGS= go list -e -export std >/dev/null # go vet's standard library, built once into the cache
	bash scripts/with-postgres.sh go test -race -parallel 4 $(filter-out $(race_free_pkgs),$(shell go list ./...))
	go test $(race_free_pkgs)
	$(foreach t,$(race_free_tests),go test -race -run '^($(lastword $(subst =, ,$(t))))$$' $(firstword $(subst =, ,$(t))) &&) true
	go test -count=1 -run '^TestReviewHugeDiffMemory$$' ./cmd/mergeguard/
	go test -count=1 -run '^TestUnknownModelNeverOverflows$$' ./review/pipeline/
	go -C deploy/validate vet ./...
	go -C deploy/validate test ./...
	go -C bench vet ./...
	bash scripts/with-postgres.sh go -C bench test ./...

## test-short: the fast tier for the inner loop (target: under a minute): every test
## with -short, without the race detector, against a throwaway PostgreSQL (or
## MERGEGUARD_TEST_DATABASE_URL's server), eight parallel tests at a time (they mostly wait on
## the database and on fake servers). -short skips the slow tests, each of which
## says so in its t.Skip message ("slow: ... skipped by -short"); make test runs them all.
## The end-to-end tests (e2e/) build and run the real binary: none runs under -short, so
## the package is vetted, which type-checks its tests, instead of linked (3 CPU-seconds).
## go test links and runs the packages in the order it is given them: the server's and the
## command's come first, as their tests wait most (on PostgreSQL, timeouts and leases), so
## that their waits overlap the other packages' links instead of ending the run alone
## (in the alphabetical order server/worker ran last, 8 s mostly waiting; 2 s less a run).
test-short:
	go vet ./e2e/...
	bash scripts/with-postgres.sh go test -short -parallel 8 $$(go list ./server/... ./cmd/... ./... | grep -v '/e2e$$')

## lint: golangci-lint (installed into bin/ on first use)
lint: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run ./...
	cd deploy/validate && ../../$(GOLANGCI_LINT) run ./...
	cd bench && ../$(GOLANGCI_LINT) run ./...

$(GOLANGCI_LINT):
	GOBIN=$(CURDIR)/bin go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv bin/golangci-lint $@

## bench: every benchmark, with allocations, then the load test (e2e TestLoad: the
## real `mergeguard serve` against fake GitHub and LLM servers on loopback), which
## prints its tables and writes bench/load.json, then the answer latency (e2e
## TestAnswerLatency: 50 replies answered with a 1 s model), then bench-peers
bench:
	bash scripts/with-postgres.sh go test -bench . -benchmem -run '^$$' ./...
	MERGEGUARD_LOAD=1 bash scripts/with-postgres.sh go test -count=1 -v -timeout 15m -run '^TestLoad$$' ./e2e/ \
		-load-out=$(CURDIR)/bench/load.json
	MERGEGUARD_LATENCY=1 bash scripts/with-postgres.sh go test -count=1 -v -timeout 10m -run '^TestAnswerLatency$$' ./e2e/
	$(MAKE) bench-peers

## bench-peers: the side-by-side suite (bench/, its own module): webhook intake
## against go-githubapp on a PostgreSQL with default durability, diff parsing
## against reviewdog, sourcegraph/go-diff and go-gitdiff, token counting against
## tiktoken-go; prints the table, writes bench/results.json and renders it into
## the README's performance section
bench-peers:
	cd bench && go build -o ../bin/bench ./cmd/bench
	cd bench && bash ../scripts/with-postgres.sh --durable ../bin/bench -out results.json -commit $(COMMIT) $(BENCH_FLAGS)
	cd bench && go run ./cmd/readme -results results.json -readme ../README.md

## soak: the soak test (e2e TestSoak): two replicas keep 200 pull requests in flight
## for MERGEGUARD_SOAK_DURATION (default 3m), then the reviews and memory are checked
soak:
	MERGEGUARD_SOAK=1 bash scripts/with-postgres.sh go test -count=1 -v -timeout 40m -run '^TestSoak$$' ./e2e/

## eval: the seeded-bug corpus (testdata/eval) reviewed by the built-in analyzers alone,
## scored (precision, recall, F1, findings on clean cases), then the context recall of
## the prompts (code-aware context with a cgo build); set OPENAI_BASE_URL etc. and run bin/mergeguard eval for a model
## (docs/evaluation.md)
eval: build
	bin/mergeguard eval --analyzers-only testdata/eval
	bin/mergeguard eval --context-only testdata/eval

## eval-real: the real-world set (testdata/eval-real: 86 pinned commits of 13 public
## repositories) reviewed without a model and scored against the tools' own findings and
## a go/types reference; prints the markdown tables of docs/evaluation.md. Needs a bare
## clone of each repository in MIRRORS (default /work/.mirror), OWNER+NAME/repo; it says
## which are missing and the `git clone --bare` that makes each
MIRRORS ?= /work/.mirror
eval-real: build
	bin/mergeguard eval --real testdata/eval-real --mirrors $(MIRRORS)

## build: bin/mergeguard with the version stamped in
build:
	go build -ldflags "$(LDFLAGS)" -o bin/mergeguard ./cmd/mergeguard

## fmt: gofmt every Go file
fmt:
	go fmt ./...
