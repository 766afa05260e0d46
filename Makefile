# webcodex: the two commands a fresh machine needs are `make demo` and `make test`.
SHELL := /bin/bash
GO ?= go
export PATH := $(PATH):/usr/local/go/bin

.PHONY: test check cross mcp-sdk-deps demo build install check-chromium fmt-check vet spec-check edge-coverage mutate mutate-changed


MODULE := github.com/webcodex/webcodex
# The packages whose tests drive real Chromium for minutes: make test runs
# them one package at a time (their tests run in parallel inside), after
# the rest, so two of them never share the two cores of a CI machine.
CHROMIUM_PKGS := cdp/surface cmd/internal/runner cmd/internal/mcp cmd/webcodex
# Packages whose every test needs Chromium: make check leaves them out.
CHROMIUM_ONLY_PKGS := $(CHROMIUM_PKGS) internal/chromiumtest
ALL_PKGS = $(shell $(GO) list ./...)

# The checkout's commit, stamped into the binaries at link time too: Go
# records none in a linked git worktree or under GOFLAGS=-buildvcs=false.
REVISION = $(shell git rev-parse HEAD 2>/dev/null)
MODIFIED = $(shell git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo true)
STAMP = -ldflags "-X $(MODULE)/cmd/internal/cmdutil.linkedRevision=$(REVISION) -X $(MODULE)/cmd/internal/cmdutil.linkedModified=$(MODIFIED)"

build:
	$(GO) build -buildvcs=auto $(STAMP) -o bin/webcodex ./cmd/webcodex
	$(GO) build -buildvcs=auto $(STAMP) -o bin/webcodex-bridge-host ./cmd/webcodex-bridge-host

# make install [PREFIX=/usr/local | BINDIR=dir]: both binaries, stamped with
# the checkout's commit, into BINDIR (default: $(go env GOBIN), else
# $(go env GOPATH)/bin).
ifdef PREFIX
BINDIR ?= $(PREFIX)/bin
endif
BINDIR ?= $(shell gobin="$$($(GO) env GOBIN)"; echo "$${gobin:-$$($(GO) env GOPATH)/bin}")
install:
	@mkdir -p "$(BINDIR)"
	$(GO) build -buildvcs=auto $(STAMP) -o "$(BINDIR)/webcodex" ./cmd/webcodex
	$(GO) build -buildvcs=auto $(STAMP) -o "$(BINDIR)/webcodex-bridge-host" ./cmd/webcodex-bridge-host
	@echo "installed webcodex and webcodex-bridge-host into $(BINDIR)"
	@case ":$$PATH:" in *":$(BINDIR):"*) ;; *) echo "$(BINDIR) is not on PATH: export PATH=\"\$$PATH:$(BINDIR)\" (and add it to ~/.profile)";; esac

# The test command CI runs: gofmt, vet, the race-enabled suite (real Chromium
# included), the node tests, and the official MCP TypeScript SDK client
# against the built binary (test/mcp-sdk, its SDK pinned by package-lock.json);
# then the seeded bugs of the directories the last commit changed (mutate-changed).
# Timing bounds stretch with the machine's measured load (internal/slow).
# -vet=off: `make vet` has just run every analyzer; go test's own subset
# would run again under another cache key (cold on CI: minutes).
test: fmt-check cross vet build mcp-sdk-deps
	$(GO) test -race -vet=off -timeout 20m $(filter-out $(addprefix $(MODULE)/,$(CHROMIUM_PKGS)),$(ALL_PKGS))
	$(GO) test -race -vet=off -timeout 20m -p 1 $(addprefix ./,$(CHROMIUM_PKGS))
	@if ls extension/test/*.test.js >/dev/null 2>&1; then node --test extension/test/; fi
	node --test cdp/surface/inject/test/
	cd test/mcp-sdk && WEBCODEX_BIN=$(CURDIR)/bin/webcodex node --test
	$(MAKE) mutate-changed

# Install the pinned SDK when the lockfile is newer than what is installed.
mcp-sdk-deps:
	@cd test/mcp-sdk && if [ ! node_modules/.package-lock.json -nt package-lock.json ]; then npm ci --no-audit --no-fund; fi

# The inner loop: gofmt, vet, and the unit and property tests that need no
# browser (-short skips every test that needs Chromium; make test runs them).
check: fmt-check cross vet
	$(GO) test -short -count=1 $(filter-out $(addprefix $(MODULE)/,$(CHROMIUM_ONLY_PKGS)),$(ALL_PKGS))

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# The module, tests included, must compile and vet for macOS and Windows
# too, without cgo: code that only Linux has goes in a _linux.go file (or
# behind a build tag) with a seam for the others. Compile-only, so it
# catches Linux-only code whether or not a test runs it; make test and
# make check run it first. CROSS_WINDOWS_PENDING is what does not compile
# for Windows yet (issue 25): the command layer starts its runner with
# setsid and wait4, the download jail (netguard) reads Unix file owners,
# and the installer writes Unix paths.
CROSS_TARGETS := darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
CROSS_WINDOWS_PENDING := /cmd/ /extension/install$$ /netguard$$ /spec$$ /scripts/mutate$$ /netguard$$
cross:
	@for t in $(CROSS_TARGETS); do \
		pkgs=./...; \
		if [ "$${t%/*}" = windows ]; then pkgs=$$($(GO) list ./... | grep -v $(addprefix -e ,$(CROSS_WINDOWS_PENDING))); fi; \
		echo "vet $$t"; \
		CGO_ENABLED=0 GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) vet $$pkgs || { echo "make cross: the module does not compile for $$t"; exit 1; }; \
	done

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
