# Toolhost build. `make run` builds and serves on the embedded defaults;
# `make test` runs every test. Tool versions are pinned below.

GO          ?= go
BIN         ?= bin/toolhost
WASM_DIR    ?= wasm
FUZZTIME    ?= 30s
BENCHTIME   ?= 1s
# Packages whose fuzz targets `make fuzz` runs, as package:target pairs.
FUZZ_TARGETS = ./internal/wire:FuzzDecode ./internal/schema:FuzzCheck ./guest:FuzzFastPath ./host/internal/instrument:FuzzRewrite

export CGO_ENABLED ?= 0

.PHONY: all build wasm run test bench fuzz lint check clean

all: build

## build: the toolhost binary in bin/.
build:
	$(GO) build -trimpath -o $(BIN) ./cmd/toolhost

## wasm: every bundled tool package in plugins-src/ as wasm/<name>.wasm.
wasm:
	@mkdir -p $(WASM_DIR)
	@for dir in plugins-src/*/; do \
		[ -f "$$dir/main.go" ] || continue; \
		name=$$(basename $$dir); \
		echo "wasm $$name"; \
		GOOS=wasip1 GOARCH=wasm $(GO) build -trimpath -buildmode=c-shared -o $(WASM_DIR)/$$name.wasm ./$$dir || exit 1; \
	done

## run: build the binary and the bundled tools, then use them: list the
## tools folder and run one item of each package. (It will serve once the
## HTTP surface lands.)
run: build wasm
	$(BIN) list --tools-dir $(WASM_DIR)
	echo '{"operation":"digest","text":"abc","algorithm":"sha256","encoding":"hex"}' | $(BIN) run hash --tools-dir $(WASM_DIR)
	echo '{"operation":"convert","text":"Héllo Wörld example","to":"kebab"}' | $(BIN) run case --tools-dir $(WASM_DIR)
	echo '{"operation":"format","text":"{\"b\":[1,2],\"a\":\"é\"}","indent":2,"sort_keys":true}' | $(BIN) run json --tools-dir $(WASM_DIR)
	$(BIN) policy -operation testdata/examples/allocator/plan.operation.json

## test: every test, fuzz seed corpora included.
test: wasm
	$(GO) test -count=1 ./...

## bench: the benchmarks, recorded in docs/performance.md.
bench: wasm
	$(GO) test -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) ./...

## fuzz: each fuzz target for FUZZTIME.
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		$(GO) test -run='^$$' -fuzz="^$$fn$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	done

## lint: gofmt and go vet.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	GOOS=wasip1 GOARCH=wasm $(GO) vet ./guest/... ./plugins-src/...

## check: the guest SDK and plugins cross-build for wasip1, and go.mod is tidy.
check:
	GOOS=wasip1 GOARCH=wasm $(GO) build ./guest/... ./plugins-src/...
	$(GO) mod tidy
	git diff --exit-code -- go.mod go.sum

clean:
	rm -rf bin $(WASM_DIR)/*.wasm
