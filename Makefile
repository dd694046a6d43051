# Toolhost build. `make run` builds and serves on the embedded defaults;
# `make test` runs every test. Tool versions are pinned below.

GO          ?= go
BIN         ?= bin/toolhost
WASM_DIR    ?= wasm
FUZZTIME    ?= 30s
BENCHTIME   ?= 1s
# Packages whose fuzz targets `make fuzz` runs, as package:target pairs.
FUZZ_TARGETS = ./internal/wire:FuzzDecode ./internal/schema:FuzzCheck ./internal/schema:FuzzFlat ./guest:FuzzFastPath ./host/internal/instrument:FuzzRewrite

export CGO_ENABLED ?= 0
# Go where the Go machines install it, when no go is on PATH already.
export PATH := $(PATH):/usr/local/go/bin

.PHONY: all deps deps-run build hub wasm extism openapi-npm run test bench bench-start bench-http bench-overload fuzz lint check clean

all: build

## deps: install what `make test` needs when it is missing (scripts/deps:
## Debian packages through apt-get as root, otherwise the exact command to
## run; a fraction of a second when everything is there). deps-run: what
## `make run` needs (Go). TOOLHOST_DEPS=skip skips both.
deps:
	@GO=$(GO) scripts/deps test
deps-run:
	@GO=$(GO) scripts/deps run

## build: the toolhost binary in bin/ (stamped with its commit: -buildvcs=auto
## overrides a GOFLAGS=-buildvcs=false, and stamps nothing outside git).
## A first build from an empty Go build cache takes minutes (README).
build: deps-run hub
	@echo "build $(BIN) (a first build, from an empty Go build cache, takes about 5 minutes on 2 cores)"
	@scripts/progress "build $(BIN)" $(GO) build -trimpath -buildvcs=auto -o $(BIN) ./cmd/toolhost

## hub: the web app (internal/hub/ui, Svelte + Vite through npm) built
## into internal/hub/dist, which the binary embeds (docs/hub.md): npm ci
## when package-lock.json changed; when a source of the app or of a
## bundled tool is newer than the build (make -B hub forces it), the bundled
## tools (make wasm), their export (for the contracts) and npm run build.
## Without node and npm it says so and the binary is built without the hub
## (its pages answer 503 hub.not_built), except under CI=true, where it
## fails; without internal/hub/ui/package.json it skips.
HUB_UI   ?= internal/hub/ui
HUB_DIST ?= internal/hub/dist
HUB_SRC   = $(shell find $(HUB_UI)/src $(HUB_UI)/scripts $(HUB_UI)/index.html $(HUB_UI)/vite.config.ts \
	$(HUB_UI)/svelte.config.js $(HUB_UI)/tsconfig.json internal/hub/client -type f \
	-not -path '*/node_modules/*' -not -path '*/generated/*' -not -name api.d.ts -not -name openapi.json 2>/dev/null)
hub:
	@if [ ! -f $(HUB_UI)/package.json ]; then echo "hub: $(HUB_UI)/package.json is missing: the hub is not built"; exit 0; fi; \
	if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then \
		if [ "$$CI" = true ]; then echo "hub: node and npm are needed to build the hub (Debian packages nodejs, npm)" >&2; exit 1; fi; \
		echo "hub: node or npm is not installed: the binary is built without the hub (its pages answer 503 hub.not_built)"; exit 0; fi; \
	$(MAKE) --no-print-directory $(HUB_DIST)/index.html

$(HUB_UI)/node_modules/.package-lock.json: $(HUB_UI)/package-lock.json $(HUB_UI)/package.json
	@echo "npm ci in $(HUB_UI)"; cd $(HUB_UI) && npm ci --no-audit --no-fund --silent

# The bundled tools' sources stand for their contracts: wasm/*.wasm are
# written again by every make wasm.
HUB_TOOLS = $(shell find plugins-src guest -name '*.go' -not -name '*_test.go' 2>/dev/null)
$(HUB_DIST)/index.html: $(HUB_UI)/node_modules/.package-lock.json $(HUB_SRC) $(HUB_TOOLS)
	@$(MAKE) --no-print-directory wasm
	@mkdir -p build
	$(GO) run ./cmd/toolhost export --tools-dir $(WASM_DIR) --out build/hub-export
	@echo "npm run build in $(HUB_UI) (into $(HUB_DIST))"; cd $(HUB_UI) && TOOLHOST_EXPORT_DIR=$(abspath build/hub-export) GO=$(GO) npm run build --silent

## wasm: every bundled tool package in plugins-src/ as wasm/<name>.wasm:
## go generate writes each package's guest_gen.go (guestgen: the
## declaration derived from its types), then the module is built with
## -tags guestgen, which links none of the SDK's derivation (docs/tool-authors.md).
wasm:
	@mkdir -p $(WASM_DIR)
	$(GO) generate ./plugins-src/...
	@for dir in plugins-src/*/; do \
		[ -f "$$dir/main.go" ] || continue; \
		name=$$(basename $$dir); \
		echo "wasm $$name"; \
		GOOS=wasip1 GOARCH=wasm $(GO) build -trimpath -tags guestgen -buildmode=c-shared -o $(WASM_DIR)/$$name.wasm ./$$dir || exit 1; \
	done

## extism: the corpus of plain Extism plugins of testdata/extism, built
## from source into EXTISM_DIR (git-ignored; docs/extism-compat.md): Go
## with go-pdk as a reactor (gopdk) and as a command module (gocmd), WAT
## (allocfree; simd, v128 instructions; badsig, a wrong import
## signature), C through clang's wasm32 target
## and wasi-libc (wordcount), AssemblyScript through npm (vowels). A step
## whose toolchain is missing says so and is skipped (the tests that need
## its module then skip), except under CI=true, where it fails.
EXTISM_DIR   ?= build/extism
EXTISM_SRC    = testdata/extism
WASI_SYSROOT ?= /usr
EXTISM_MODULES = $(addprefix $(EXTISM_DIR)/,gopdk.wasm gocmd.wasm allocfree.wasm simd.wasm badsig.wasm wordcount.wasm vowels.wasm)
# extism_need COMMAND,PACKAGE: go on when COMMAND is installed; otherwise
# skip the rest of the recipe line with a message, or fail under CI=true.
extism_need = command -v $(1) >/dev/null 2>&1 || { \
	if [ "$$CI" = true ]; then echo "extism: $(1) ($(2)) is missing: $@ cannot be built" >&2; exit 1; fi; \
	echo "extism: $(1) ($(2)) is not installed: $@ is skipped, and the tests that need it skip"; exit 0; }

extism: $(EXTISM_MODULES)

$(EXTISM_DIR):
	@mkdir -p $@

$(EXTISM_DIR)/gopdk.wasm: $(wildcard $(EXTISM_SRC)/gopdk/*) | $(EXTISM_DIR)
	@echo "extism $@ (Go, go-pdk, reactor)"
	@cd $(EXTISM_SRC)/gopdk && GOOS=wasip1 GOARCH=wasm GOFLAGS=-mod=mod $(GO) build -trimpath -buildmode=c-shared -o $(abspath $@) .

$(EXTISM_DIR)/gocmd.wasm: $(wildcard $(EXTISM_SRC)/gocmd/*) | $(EXTISM_DIR)
	@echo "extism $@ (Go, go-pdk, command module)"
	@cd $(EXTISM_SRC)/gocmd && GOOS=wasip1 GOARCH=wasm GOFLAGS=-mod=mod $(GO) build -trimpath -o $(abspath $@) .

# wabt 1.0.32 (Debian bookworm) reads the SIMD proposal's instructions
# without --enable-simd.
$(EXTISM_DIR)/allocfree.wasm: $(EXTISM_SRC)/allocfree/allocfree.wat | $(EXTISM_DIR)
	@$(call extism_need,wat2wasm,wabt); echo "extism $@ (WAT)"; wat2wasm $< -o $@
$(EXTISM_DIR)/simd.wasm: $(EXTISM_SRC)/simd/simd.wat | $(EXTISM_DIR)
	@$(call extism_need,wat2wasm,wabt); echo "extism $@ (WAT, SIMD)"; wat2wasm $< -o $@
$(EXTISM_DIR)/badsig.wasm: $(EXTISM_SRC)/badsig/badsig.wat | $(EXTISM_DIR)
	@$(call extism_need,wat2wasm,wabt); echo "extism $@ (WAT, a wrong import signature)"; wat2wasm $< -o $@

$(EXTISM_DIR)/wordcount.wasm: $(EXTISM_SRC)/wordcount/wordcount.c | $(EXTISM_DIR)
	@$(call extism_need,clang,clang); $(call extism_need,wasm-ld,lld); \
	if [ ! -f $(WASI_SYSROOT)/lib/wasm32-wasi/libc.a ]; then \
		if [ "$$CI" = true ]; then echo "extism: wasi-libc is missing ($(WASI_SYSROOT)/lib/wasm32-wasi/libc.a)" >&2; exit 1; fi; \
		echo "extism: wasi-libc is not installed: $@ is skipped, and the tests that need it skip"; exit 0; fi; \
	echo "extism $@ (C, clang wasm32-wasi)"; \
	clang --target=wasm32-wasi --sysroot=$(WASI_SYSROOT) -O2 -nostartfiles -Wl,--no-entry \
		-Wl,--export=count -Wl,--export=adler32 -Wl,--export=empty -o $@ $<

# npm ci installs package-lock.json's exact versions into node_modules
# (git-ignored), again only when the lock changes.
$(EXTISM_SRC)/vowels/node_modules/.package-lock.json: $(EXTISM_SRC)/vowels/package-lock.json
	@$(call extism_need,npm,npm); echo "npm ci in $(EXTISM_SRC)/vowels"; \
	cd $(EXTISM_SRC)/vowels && npm ci --no-audit --no-fund --silent

$(EXTISM_DIR)/vowels.wasm: $(EXTISM_SRC)/vowels/assembly/index.ts $(EXTISM_SRC)/vowels/node_modules/.package-lock.json | $(EXTISM_DIR)
	@$(call extism_need,node,nodejs); \
	if [ ! -x $(EXTISM_SRC)/vowels/node_modules/.bin/asc ]; then \
		if [ "$$CI" = true ]; then echo "extism: AssemblyScript is not installed (npm ci in $(EXTISM_SRC)/vowels)" >&2; exit 1; fi; \
		echo "extism: AssemblyScript is not installed (npm): $@ is skipped, and the tests that need it skip"; exit 0; fi; \
	echo "extism $@ (AssemblyScript, as-pdk)"; \
	cd $(EXTISM_SRC)/vowels && node_modules/.bin/asc assembly/index.ts --outFile $(abspath $@) --optimize --use abort=assembly/index/myAbort

## run: build the binary and the bundled tools, then serve on ADDR with
## the tools folder wasm/ and the data folder data/ (SIGINT or SIGTERM
## drains and stops). Make a token first: bin/toolhost token create --user NAME.
ADDR     ?= :8080
DATA_DIR ?= data
run: build wasm
	$(BIN) serve --addr $(ADDR) --tools-dir $(WASM_DIR) --data-dir $(DATA_DIR)

# Packages whose tests are about concurrency: `make test` runs them again
# under the race detector (which needs cgo).
RACE_PKGS = ./internal/run ./internal/guard ./internal/executor ./internal/registry ./internal/server ./internal/supervisor ./internal/jobs/... ./internal/auth ./internal/store ./internal/abuse

## openapi-npm: the npm tools internal/catalog's TestOpenAPITooling runs
## on /openapi.json (redocly lint, openapi-typescript, tsc), installed by
## npm ci at package-lock.json's exact versions into the git-ignored
## OPENAPI_NPM/node_modules. Without npm it says so and the test skips,
## except under CI=true, where it fails.
OPENAPI_NPM ?= internal/catalog/testdata/openapi
openapi-npm: $(OPENAPI_NPM)/node_modules/.package-lock.json

$(OPENAPI_NPM)/node_modules/.package-lock.json: $(OPENAPI_NPM)/package-lock.json $(OPENAPI_NPM)/package.json
	@command -v npm >/dev/null 2>&1 || { \
		if [ "$$CI" = true ]; then echo "openapi-npm: npm is missing: the OpenAPI tooling test cannot run" >&2; exit 1; fi; \
		echo "openapi-npm: npm is not installed: the OpenAPI tooling test skips"; exit 0; }; \
	echo "npm ci in $(OPENAPI_NPM)"; cd $(OPENAPI_NPM) && npm ci --no-audit --no-fund --silent

## test: every test (the bundled tools and the Extism corpus built
## first), fuzz seed corpora included, the decode-count tests
## and the SQL statement counts (build tag toolhost_count,
## docs/canonical-json.md, docs/performance.md), then the
## concurrency packages under -race.
test: deps wasm extism openapi-npm hub
	$(GO) test -count=1 ./...
	cd guest && $(GO) test -count=1 ./...
	$(GO) test -count=1 -tags toolhost_count -run 'Decodes|Statements|SQLFree' ./internal/...
	CGO_ENABLED=1 $(GO) test -race -count=1 $(RACE_PKGS)
	CGO_ENABLED=1 $(GO) test -race -count=1 -run 'Pool' ./host

## bench: the benchmarks, recorded in docs/performance.md, then the
## start-up figures (bench-start).
bench: wasm
	$(GO) test -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) ./...
	@$(MAKE) --no-print-directory bench-start

## bench-start: issue 14's start-up figures beside their goals
## (bench/startbench: module sizes, cold and warm loads, serve's start to
## listening, ready and the first hash run, cold and warm, idle RSS, a
## dropped module; bench/README.md). About four minutes; BENCH_START_FLAGS
## passes flags (e.g. -warm-runs 5 -keep).
BENCH_START_FLAGS ?=
bench-start: build wasm
	$(GO) build -trimpath -o bin/startbench ./bench/startbench
	bin/startbench -toolhost $(BIN) -tools-dir $(WASM_DIR) $(BENCH_START_FLAGS)

## bench-http: Toolhost's run route side by side with the same sha256 in an
## unsandboxed gin peer and (when node and npm are installed) an Express
## peer, each driven by the same wrk in BENCH_HTTP_ROUNDS alternating rounds
## of BENCH_HTTP_SECONDS; then the compute route and the run route open-loop
## at half its peak for BENCH_HTTP_OPEN_SECONDS, each server in turn
## (bench/README.md, docs/performance.md "HTTP"). Needs wrk; CI does not
## run it.
BENCH_HTTP_SECONDS ?= 5
BENCH_HTTP_ROUNDS  ?= 3
BENCH_HTTP_OPEN_SECONDS ?= 15
bench-http: build wasm
	@command -v wrk >/dev/null 2>&1 || { echo "bench-http needs wrk: apt-get install wrk (Debian)"; exit 1; }
	$(GO) build -trimpath -o bin/bench-peer ./bench/peer
	$(GO) build -trimpath -o bin/httpbench ./bench/httpbench
	@if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then \
		echo "npm ci in bench/express"; (cd bench/express && npm ci --no-audit --no-fund --silent) || exit 1; \
	else echo "node or npm is not installed: the Express peer is skipped"; fi
	bin/httpbench -toolhost $(BIN) -peer bin/bench-peer -express bench/express -tools-dir $(WASM_DIR) -seconds $(BENCH_HTTP_SECONDS) -rounds $(BENCH_HTTP_ROUNDS) -open-seconds $(BENCH_HTTP_OPEN_SECONDS)

## bench-overload: the overload benchmark over a real server on loopback:
## the run and compute routes' peak, then open-loop for
## BENCH_OVERLOAD_SECONDS at twice what the quota admits (2xquota) and at
## twice the peak (2xpeak), in enforce and report mode (docs/performance.md).
BENCH_OVERLOAD_SECONDS ?= 15
bench-overload: wasm
	TOOLHOST_BENCH_HTTP=1 TOOLHOST_BENCH_SECONDS=$(BENCH_OVERLOAD_SECONDS) $(GO) test -run='^$$' -bench='^BenchmarkOverload$$' -benchtime=1x -timeout=30m ./internal/server

## fuzz: each fuzz target for FUZZTIME.
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; dir=.; \
		case $$pkg in ./guest|./guest/*) dir=guest; pkg=.$${pkg#./guest};; esac; \
		(cd $$dir && $(GO) test -run='^$$' -fuzz="^$$fn$$" -fuzztime=$(FUZZTIME) $$pkg) || exit 1; \
	done

## lint: gofmt and go vet, then staticcheck and golangci-lint (its
## configuration: .golangci.yml) on the main module for linux, guest/ for
## linux and wasip1, and plugins-src/ for wasip1 with and without -tags
## guestgen. guest/ is not linted with -tags guestgen: that build leaves
## out the SDK's derivation, and unused would report the fields and helpers
## only the derivation reads (go vet checks that build). What each linter
## checks and how an exclusion is written: docs/development.md.
## The two linters are pinned below, fetched through the Go module proxy
## and installed by go install into LINT_DIR (git-ignored), a folder per Go
## version: they stay out of go.mod (make check), and are built by the Go
## that lints. Their first build takes about 2 minutes on 2 cores; a warm
## make lint about 25 s (docs/development.md).
STATICCHECK_VERSION   ?= v0.8.2
GOLANGCI_LINT_VERSION ?= v2.15.0
LINT_DIR ?= .cache/lint
# Expanded in the lint recipe alone, so that no other target asks go env.
LINT_BIN       = $(abspath $(LINT_DIR))/$(shell $(GO) env GOVERSION)
STATICCHECK    = $(LINT_BIN)/staticcheck@$(STATICCHECK_VERSION)/staticcheck
GOLANGCI_LINT  = $(LINT_BIN)/golangci-lint@$(GOLANGCI_LINT_VERSION)/golangci-lint
# The linters are built for this machine (GOOS and GOARCH cleared),
# whatever the lint's target.
$(abspath $(LINT_DIR))/%/staticcheck:
	@echo "go install staticcheck@$(STATICCHECK_VERSION) into $(@D)"
	@GOOS= GOARCH= GOBIN=$(@D) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
$(abspath $(LINT_DIR))/%/golangci-lint:
	@echo "go install golangci-lint@$(GOLANGCI_LINT_VERSION) into $(@D) (about 2 minutes the first time)"
	@GOOS= GOARCH= GOBIN=$(@D) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd guest && $(GO) vet ./... && GOOS=wasip1 GOARCH=wasm $(GO) vet ./... && GOOS=wasip1 GOARCH=wasm $(GO) vet -tags guestgen ./...
	GOOS=wasip1 GOARCH=wasm $(GO) vet ./plugins-src/...
	GOOS=wasip1 GOARCH=wasm $(GO) vet -tags guestgen ./plugins-src/...
	GOOS=darwin $(GO) vet ./host/...
	@$(MAKE) --no-print-directory $(STATICCHECK) $(GOLANGCI_LINT)
	$(STATICCHECK) ./...
	cd guest && $(STATICCHECK) ./... && GOOS=wasip1 GOARCH=wasm $(STATICCHECK) ./...
	GOOS=wasip1 GOARCH=wasm $(STATICCHECK) ./plugins-src/...
	$(GOLANGCI_LINT) run ./...
	cd guest && $(GOLANGCI_LINT) run ./... && GOOS=wasip1 GOARCH=wasm $(GOLANGCI_LINT) run ./...
	GOOS=wasip1 GOARCH=wasm $(GOLANGCI_LINT) run ./plugins-src/...
	GOOS=wasip1 GOARCH=wasm $(GOLANGCI_LINT) run --build-tags guestgen ./plugins-src/...

## check: the guest SDK (its own module, guest/) and plugins cross-build
## for wasip1, and both modules are tidy.
check:
	cd guest && GOOS=wasip1 GOARCH=wasm $(GO) build ./...
	GOOS=wasip1 GOARCH=wasm $(GO) build ./plugins-src/...
	$(GO) mod tidy
	cd guest && $(GO) mod tidy
	git diff --exit-code -- go.mod go.sum guest/go.mod

clean:
	rm -rf bin $(WASM_DIR)/*.wasm $(EXTISM_DIR)
