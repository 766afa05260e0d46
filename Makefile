# webcodex: the two commands a fresh machine needs are `make demo` and `make test`.
SHELL := /bin/bash
GO ?= go
export PATH := $(PATH):/usr/local/go/bin

.PHONY: test mcp-sdk-deps demo build check-chromium fmt-check vet spec-check edge-coverage mutate mutate-changed

build:
	$(GO) build -buildvcs=auto -o bin/webcodex ./cmd/webcodex
	$(GO) build -buildvcs=auto -o bin/webcodex-bridge-host ./cmd/webcodex-bridge-host

# The test command CI runs: gofmt, vet, the race-enabled suite (real Chromium
# included), the node tests, and the official MCP TypeScript SDK client
# against the built binary (test/mcp-sdk, its SDK pinned by package-lock.json);
# then the seeded bugs of the directories the last commit changed (mutate-changed).
test: fmt-check vet build mcp-sdk-deps
	$(GO) test -race -timeout 20m ./...
	@if ls extension/test/*.test.js >/dev/null 2>&1; then node --test extension/test/; fi
	node --test cdp/surface/inject/test/
	cd test/mcp-sdk && WEBCODEX_BIN=$(CURDIR)/bin/webcodex node --test
	$(MAKE) mutate-changed

# Install the pinned SDK when the lockfile is newer than what is installed.
mcp-sdk-deps:
	@cd test/mcp-sdk && if [ ! node_modules/.package-lock.json -nt package-lock.json ]; then npm ci --no-audit --no-fund; fi

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

spec-check:
	$(GO) run ./cmd/webcodex spec --check

# Re-record which real-browser test takes each machine edge (spec/coverage,
# committed) and render spec/edge-coverage.md from it.
EDGE_COVERAGE_PKGS ?= ./cmd/internal/runner ./cmd/internal/mcp ./cmd/webcodex ./extension/bridge
edge-coverage:
	rm -f spec/coverage/*.json
	WEBCODEX_EDGE_COVERAGE=$(CURDIR)/spec/coverage $(GO) test -count=1 -timeout 30m $(EDGE_COVERAGE_PKGS)
	$(GO) run ./cmd/webcodex spec

# Apply each seeded bug to a copy of the repository and report which test
# kills it (scripts/mutate).
mutate:
	$(GO) run ./scripts/mutate

# The seeded bugs in directories the last commit (or MUTATE_SINCE) changed:
# each must be killed. The checker's own (fsm/) take about a minute; a
# machine package's a few.
MUTATE_SINCE ?= HEAD~1
mutate-changed:
	@if git rev-parse -q --verify '$(MUTATE_SINCE)^{commit}' >/dev/null 2>&1; then \
		$(GO) run ./scripts/mutate -since '$(MUTATE_SINCE)'; \
	else echo "mutate: no $(MUTATE_SINCE) to compare with; run make mutate"; fi

check-chromium:
	@if [ -z "$$WEBCODEX_CHROME" ] && [ ! -x /usr/bin/chromium ] && ! command -v chromium >/dev/null && ! command -v google-chrome >/dev/null; then \
		echo "Chromium is missing. Install it with: sudo apt-get install -y chromium"; exit 1; fi

# The main job: a real browser task on the embedded default.
demo: check-chromium build
	./bin/webcodex demo
