# apiserver-lite build, test and install.
#
#   make build       build bin/apiserver-lite
#   make test        lint + unit tests (race) + end-to-end suite (the CI gate)
#   make test-unit   lint + unit tests only (fast)
#   make test-package the amd64 packages read back; alert rules and dashboard
#                    against the daemon's metrics (part of make test)
#   make bench       side-by-side benchmark against kube-apiserver, written to
#                    docs/benchmarks.md (BENCH_SCALE=10: 70,000 objects, written
#                    to docs/benchmarks-scale10.md)
#   make bench-fleet N apiserver-lite nodes against one kube-apiserver beside
#                    their kubelet read set made directly (BENCH_FLEET_NODES,
#                    default 100; BENCH_FLEET_ROUNDS of both sides, default
#                    3; BENCH_FLEET_SETTLE before each window, default
#                    20s), written to docs/benchmarks-fleet.md
#   make bench-frames one node's HTTP/2 frames to the cloud a minute by type,
#                    apiserver-lite beside its kubelet read set direct
#                    (GODEBUG=http2debug=2), printed
#   make bench-pool  pools of apiserver-lite nodes against one kube-apiserver
#                    through counting links, pooled beside unpooled, and a
#                    leader failover (BENCH_POOL_SIZES, default "10 50"),
#                    written to docs/benchmarks-pool.md
#   make bench-micro Go microbenchmarks of ./pkg/..., written to docs/benchmarks.txt
#   make fuzz        a short run of every fuzz target
#   make upstream-e2e Kubernetes' own api-machinery e2e specs through
#                    apiserver-lite (not part of make test)
#   make demo        throwaway control plane + apiserver-lite + hollow kubelet,
#                    with a scripted outage and recovery (Ctrl-C to stop)
#   make run         run against the cluster in KUBECONFIG
#   make install     install binary, systemd units and example config (an
#                    existing config is kept)
#   make package     a .deb and an .rpm for this host's architecture, in
#                    bin/packages (nfpm, from test/tools/release)
#   make dist        packages and tarballs for amd64 and arm64 (arm64 needs
#                    aarch64-linux-gnu-gcc: apt-get install
#                    gcc-aarch64-linux-gnu) and SHA256SUMS, in dist/

GO        ?= go
BIN_DIR   := bin
BINARY    := $(BIN_DIR)/apiserver-lite
PREFIX    ?= /usr/local
DESTDIR   ?=
SYSCONFDIR ?= /etc
UNITDIR   ?= /lib/systemd/system
KUBECONFIG ?= $(HOME)/.kube/config
DATA_DIR  ?= $(CURDIR)/.data
NODE_NAME ?= $(shell hostname | tr A-Z a-z)
SYNC_SCOPE ?= auto
FUZZTIME  ?= 15s
E2E_TIMEOUT ?= 40m
BENCH_SCALE ?= 1
BENCH_ROUNDS ?= 3
BENCH_TIMEOUT ?= 90m
BENCH_FLEET_NODES ?= 100
BENCH_FLEET_PODS ?= 30
BENCH_FLEET_ROUNDS ?= 3
BENCH_FLEET_REPORT ?= docs/benchmarks-fleet.md
BENCH_POOL_SIZES ?= 10 50
BENCH_POOL_REPORT ?= docs/benchmarks-pool.md
# The default data set's report is docs/benchmarks.md; another scale's goes
# beside it, so one run does not overwrite the other.
BENCH_REPORT ?= docs/$(if $(filter 1,$(BENCH_SCALE)),benchmarks,benchmarks-scale$(BENCH_SCALE)).md

# cgo is required by github.com/mattn/go-sqlite3.
export CGO_ENABLED := 1

.PHONY: all build lint test test-unit test-package test-e2e tools upstream-tools upstream-e2e bench bench-fleet bench-frames bench-pool bench-micro fuzz demo run install package dist clean

all: build

# `apiserver-lite version` reports these, and the packages carry VERSION.
# The go command stamps no VCS revision in a git worktree or with
# GOFLAGS=-buildvcs=false, so make stamps it. VERSION is the nearest tag,
# or with none 0.0.0-<commit date, UTC>-<short revision>[-dirty]: it sorts
# below every release, and by date among builds of untagged commits.
ifeq ($(origin REVISION),undefined)
REVISION := $(shell r=$$(git rev-parse HEAD 2>/dev/null) && { git diff --quiet HEAD && echo $$r || echo $$r-dirty; })
endif
ifeq ($(origin VERSION),undefined)
VERSION := $(shell git describe --tags --dirty 2>/dev/null || \
  { d=$$(TZ=UTC git show -s --format=%cd --date=format-local:%Y%m%d HEAD 2>/dev/null) && \
    r=$$(git rev-parse --short=7 HEAD) && \
    echo 0.0.0-$$d-$$r$$(git diff --quiet HEAD || echo -dirty); })
endif
LDFLAGS  := -X main.revision=$(REVISION) $(if $(VERSION),-X main.version=$(VERSION))

# The release tools module (nfpm, and the packages' and monitoring's tests)
# is a module of its own, so the product's go.mod stays lean.
RELEASE_MODULE := test/tools/release
PACKAGE_DIR    := $(BIN_DIR)/packages
DIST_DIR       ?= dist
RELEASE_ENV    := GOWORK=off GO=$(GO) VERSION=$(VERSION) LDFLAGS="$(LDFLAGS)"

build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BINARY) ./cmd/apiserver-lite

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags e2e ./test/...

# The systemd unit's checks (systemd-analyze verify, and an exposure of at
# most 3.0 in systemd-analyze security) run as unit tests in
# cmd/apiserver-lite and are skipped where systemd-analyze is missing.
test-unit: lint
	@command -v systemd-analyze >/dev/null || \
	  echo "systemd-analyze not installed: the systemd unit checks are skipped (install systemd to run them)"
	$(GO) test -race -count=1 ./...

# The end-to-end suite, the differential conformance suite and the benchmark
# harness's smoke runs (TestBenchSmoke, TestBenchHeldSmoke,
# TestBenchHeldNamespaceSmoke, TestBenchHeldNodesSmoke, TestBenchFleetSmoke;
# TestBench, TestBenchHeld, TestBenchHeldNamespace, TestBenchHeldNodes and
# TestBenchFleet themselves skip without BENCH_REPORT, BENCH_FLEET_REPORT)
# run against a real etcd, kube-apiserver, kubectl, kubemark
# (hollow kubelet and kube-proxy) and CoreDNS built from Go modules (cached
# after the first build).
tools:
	@test/tools/build.sh >/dev/null

test-e2e: build tools
	APISERVER_LITE_BIN=$(abspath $(BINARY)) \
	APISERVER_LITE_TOOLS_BIN=$$(test/tools/build.sh) \
	$(GO) test -tags e2e -count=1 -timeout $(E2E_TIMEOUT) ./test/e2e/... ./test/conformance/... ./test/bench/...

# The amd64 .deb and .rpm are built and read back (file list, modes,
# config-file marks, units, maintainer scripts, the binary's version); the
# alert rules are parsed with Prometheus' own parser and every metric the
# rules and the dashboard use is checked against the daemon's registry.
# These tests live in the release tools module, which `go test ./...` of
# the product does not reach.
test-package: package
	GOWORK=off $(GO) -C $(RELEASE_MODULE) vet ./...
	GOWORK=off APISERVER_LITE_PACKAGES=$(abspath $(PACKAGE_DIR)) APISERVER_LITE_VERSION=$(VERSION) \
	  $(GO) -C $(RELEASE_MODULE) test -count=1 ./...

test: test-unit test-package test-e2e

# The side-by-side benchmark: a real cloud, a data set of BENCH_SCALE times
# 5,000 pods and 2,000 configmaps, apiserver-lite against it; it rewrites the
# generated section of docs/benchmarks.md. Then TestBenchHeld: BENCH_SCALE
# times 1,000 services and EndpointSlices, what holding EndpointSlices for the
# node's pods costs apiserver-lite and the cloud beside the same components
# reading the cloud directly, in its own generated section. Then
# TestBenchHeldNamespace and TestBenchHeldNodes: BENCH_SCALE times 1,000
# ConfigMaps held in one namespace for an operator, and 1,000 Nodes held
# whole for a CNI agent (flannel's service account), each beside the same
# informer reading the cloud directly. Then TestBenchFlood: the kubelet's
# p99 on its door alone and during a 450-connection flood of forged
# tokens, in its own section. See docs/benchmarks.md.
bench: build tools
	APISERVER_LITE_BIN=$(abspath $(BINARY)) \
	APISERVER_LITE_TOOLS_BIN=$$(test/tools/build.sh) \
	BENCH_REPORT=$(abspath $(BENCH_REPORT)) \
	BENCH_SCALE=$(BENCH_SCALE) BENCH_ROUNDS=$(BENCH_ROUNDS) \
	$(GO) test -tags e2e -count=1 -timeout $(BENCH_TIMEOUT) -run '^(TestBench|TestBenchHeld|TestBenchHeldNamespace|TestBenchHeldNodes|TestBenchFlood)$$' -v ./test/bench/

# The fleet benchmark: BENCH_FLEET_NODES nodes with BENCH_FLEET_PODS pods
# each, every node's apiserver-lite against one cloud, then the same nodes'
# kubelet read set made directly; the cloud's cost of each, a cloud restart
# and a restart of every node. Its smoke run (3 nodes, TestBenchFleetSmoke)
# is part of make test.
bench-fleet: build tools
	APISERVER_LITE_BIN=$(abspath $(BINARY)) \
	APISERVER_LITE_TOOLS_BIN=$$(test/tools/build.sh) \
	BENCH_FLEET_REPORT=$(abspath $(BENCH_FLEET_REPORT)) \
	BENCH_FLEET_NODES=$(BENCH_FLEET_NODES) BENCH_FLEET_PODS=$(BENCH_FLEET_PODS) \
	BENCH_FLEET_ROUNDS=$(BENCH_FLEET_ROUNDS) \
	$(GO) test -tags e2e -count=1 -timeout $(BENCH_TIMEOUT) -run '^TestBenchFleet$$' -v ./test/bench/fleet/

# The frame count (docs/benchmarks.md): one fleet node's HTTP/2 frames to
# the cloud a minute by direction and type over a steady window, its
# apiserver-lite's then its kubelet read set's made directly, as their
# clients log them. Every process logs every frame (GODEBUG), so one node
# only; not part of make test.
bench-frames: build tools
	APISERVER_LITE_BIN=$(abspath $(BINARY)) \
	APISERVER_LITE_TOOLS_BIN=$$(test/tools/build.sh) \
	GODEBUG=http2debug=2 \
	$(GO) test -tags e2e -count=1 -timeout $(BENCH_TIMEOUT) -run '^TestBenchFrames$$' -v ./test/bench/fleet/

# The pool benchmark (docs/pool.md): for each size of BENCH_POOL_SIZES,
# that many nodes on their node credentials, each with a reader of
# EndpointSlices on a pod-bound token, 1,000 services and EndpointSlices
# with 10 updates a second; every node's cloud link through a counting
# proxy; unpooled, then pooled, then the leader killed. Not part of make
# test (TestPool covers a pool of 3 there).
bench-pool: build tools
	APISERVER_LITE_BIN=$(abspath $(BINARY)) \
	APISERVER_LITE_TOOLS_BIN=$$(test/tools/build.sh) \
	BENCH_POOL_REPORT=$(abspath $(BENCH_POOL_REPORT)) \
	BENCH_POOL_SIZES="$(BENCH_POOL_SIZES)" \
	$(GO) test -tags e2e -count=1 -timeout $(BENCH_TIMEOUT) -run '^TestBenchPool$$' -v ./test/bench/pool/

# Kubernetes' own e2e.test (k8s.io/kubernetes test/e2e, cached with the other
# tools) runs its api-machinery specs (Watchers, Table transformation,
# Discovery, server version, chunking, API Streaming) through apiserver-lite
# in front of the real control plane. Not part of `make test`: the first
# e2e.test build alone takes about 20 minutes on two cores, which does not fit
# the CI budget next to the other suites.
upstream-tools:
	@test/tools/build.sh --upstream-e2e >/dev/null

upstream-e2e: build upstream-tools
	APISERVER_LITE_BIN=$(abspath $(BINARY)) \
	APISERVER_LITE_TOOLS_BIN=$$(test/tools/build.sh --upstream-e2e) \
	$(GO) test -tags e2e -count=1 -timeout $(E2E_TIMEOUT) -v -run TestUpstreamAPIMachinery ./test/upstream/

bench-micro:
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/... | tee docs/benchmarks.txt

fuzz:
	@for pkg in $$($(GO) list ./pkg/...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# DEMO_FLAGS=-once exits after the scripted outage and recovery.
demo: build tools
	$(GO) build -tags e2e -o $(BIN_DIR)/demo ./test/demo
	APISERVER_LITE_BIN=$(abspath $(BINARY)) \
	APISERVER_LITE_TOOLS_BIN=$$(test/tools/build.sh) \
	exec $(BIN_DIR)/demo $(DEMO_FLAGS)

# SYNC_SCOPE=cluster runs on credentials that are not a node's (auto refuses
# them); the door at 127.0.0.1:10550 is HTTPS and authenticates every caller.
run: build
	$(BINARY) --kubeconfig $(KUBECONFIG) --data-dir $(DATA_DIR) --node-name $(NODE_NAME) --sync-scope $(SYNC_SCOPE)

# Every unit in systemd/, ExecStart at $(PREFIX)/bin. An existing config is
# the operator's and is kept; the new example is then left beside it.
install: build
	install -D -m 0755 $(BINARY) $(DESTDIR)$(PREFIX)/bin/apiserver-lite
	install -d -m 0755 $(DESTDIR)$(UNITDIR)
	for unit in systemd/*; do \
	  sed 's|/usr/local/bin/apiserver-lite|$(PREFIX)/bin/apiserver-lite|g' $$unit > $(DESTDIR)$(UNITDIR)/$${unit##*/} && \
	  chmod 0644 $(DESTDIR)$(UNITDIR)/$${unit##*/} || exit 1; \
	done
	@config=$(DESTDIR)$(SYSCONFDIR)/apiserver-lite/config.yaml; \
	if [ -e $$config ]; then \
	  install -m 0644 configs/apiserver-lite.yaml $$config.example && \
	  echo "kept $$config; the new example is $$config.example"; \
	else \
	  install -D -m 0644 configs/apiserver-lite.yaml $$config; \
	fi

# The .deb and .rpm for this host's architecture, in bin/packages.
package:
	rm -rf $(PACKAGE_DIR).new
	$(RELEASE_ENV) $(RELEASE_MODULE)/package.sh $$($(GO) env GOARCH) $(PACKAGE_DIR).new
	rm -rf $(PACKAGE_DIR) && mv $(PACKAGE_DIR).new $(PACKAGE_DIR)

# Release artifacts in dist/: packages and tarballs for amd64 and arm64
# (arm64 needs aarch64-linux-gnu-gcc, else it is skipped with a message),
# and SHA256SUMS. See docs/operations.md, "Release artifacts".
dist:
	$(RELEASE_ENV) $(RELEASE_MODULE)/dist.sh $(DIST_DIR)

clean:
	rm -rf $(BIN_DIR) $(DATA_DIR) $(DIST_DIR)
