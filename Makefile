# Sluice: make run starts the gateway on its embedded defaults; make test runs everything CI runs.
GO ?= go
export GOFLAGS ?= -mod=mod

.PHONY: run mock test vet bench bench-go fuzz build fleet fleet-stop test-fleet test-stress

run:
	$(GO) run ./cmd/gateway

mock:
	$(GO) run ./cmd/mockllm -addr 127.0.0.1:9000 -fixtures internal/mockllm/testdata

build:
	$(GO) build -o bin/ ./cmd/...

vet:
	@test -z "$$(gofmt -l .)" || { echo "gofmt would change:"; gofmt -l .; exit 1; }
	$(GO) vet ./...

# SLUICE_DEX: the console's sign-in through a real Dex (test/e2e), skipped without bin/dex
# outside CI; .ci/run builds it first (make dex). SLUICE_TOXIPROXY: route: latency on a fleet
# behind a real Toxiproxy (internal/gateway), which the test builds if missing.
test: vet
	SLUICE_DEX=$(DEX) SLUICE_TOXIPROXY=$(TOXIPROXY) $(GO) test -race -count=1 ./...

# make fleet: the production shape on loopback (deploy/fleet.sh): redis-server, the mock, N=3
# gateway replicas and nginx with the compose configuration; Ctrl-C or make fleet-stop ends it.
N ?= 3
fleet:
	deploy/fleet.sh up $(N)

fleet-stop:
	deploy/fleet.sh stop

# make test-fleet: the fleet scenarios (test/fleet) through nginx; needs redis-server and nginx.
test-fleet:
	SLUICE_FLEET_TEST=1 $(GO) test -count=1 -timeout 10m ./test/fleet/

# make test-stress: the whole suite (e2e included) and the fleet suite COUNT=3 times with two
# busy loops beside them, to catch tests that fail on a busy machine (test/stress.sh; bounded
# by go test -timeout; about 15 to 25 minutes on 2 cores).
COUNT ?= 3
test-stress:
	COUNT=$(COUNT) GO=$(GO) test/stress.sh

# make bench: the Go benchmarks, then the load comparison against a bare reverse proxy
# (cmd/sluicebench; a few minutes, loopback only). BENCHFLAGS=-quick for a smoke run.
bench: bench-go bench-load

bench-go:
	$(GO) test -run='^$$' -bench=. -benchmem -benchtime=1s ./internal/...

include bench.mk

# Each fuzz target runs FUZZTIME (the seed corpora run in make test).
FUZZTIME ?= 30s
fuzz:
	@for pkg in $$($(GO) list ./internal/...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# make test-traces (run by make test-fleet): the gateway's spans in a real Jaeger, read back
# through its query API, and /metrics through Prometheus's parser (test/traces). Jaeger is
# built from its own tools module (tools/jaeger: never in the gateway's go.mod) into bin/,
# once: on a fresh machine 1.3 GB of modules and 2,300 packages (about 11 CPU-minutes, so 6
# minutes on 2 idle cores); seconds after, from the build cache.
JAEGER ?= $(CURDIR)/bin/jaeger
.PHONY: test-traces
test-fleet: test-traces
test-traces: $(JAEGER)
	SLUICE_FLEET_TEST=1 SLUICE_JAEGER=$(JAEGER) $(GO) test -count=1 -timeout 5m ./test/traces/

$(JAEGER): tools/jaeger/go.mod tools/jaeger/go.sum
	cd tools/jaeger && $(GO) build -trimpath -ldflags='-s -w' -o $(JAEGER) github.com/jaegertracing/jaeger/cmd/jaeger

# Dex (the OpenID provider of the sign-in's worked example and of its browser test) is built
# from its own tools module (tools/dex: never in the gateway's go.mod) into bin/, once;
# .ci/run makes it before make test. tools/dex pins the commit of v2.45.1 (Dex's v2 tags are
# not importable by version): groups on static users, which the browser test maps, came in
# v2.45.0.
DEX ?= $(CURDIR)/bin/dex
.PHONY: dex
dex: $(DEX)
$(DEX): tools/dex/go.mod tools/dex/go.sum
	cd tools/dex && $(GO) build -trimpath -ldflags='-s -w' -o $(DEX) github.com/dexidp/dex/cmd/dex

# Toxiproxy (Shopify's, v2.5.0: the latency toxic of route: latency's fleet test) is built
# from its own tools module (tools/toxiproxy: never in the gateway's go.mod) into bin/, once;
# .ci/run makes it before make test. 5 small modules, seconds to build.
TOXIPROXY ?= $(CURDIR)/bin/toxiproxy-server
.PHONY: toxiproxy
toxiproxy: $(TOXIPROXY)
$(TOXIPROXY): tools/toxiproxy/go.mod tools/toxiproxy/go.sum
	cd tools/toxiproxy && $(GO) build -trimpath -ldflags='-s -w' -o $(TOXIPROXY) github.com/Shopify/toxiproxy/v2/cmd/server

# make test-helm (run by .ci/run): the Helm chart (deploy/helm/sluice) rendered offline with
# Helm's Go SDK for its defaults and variants, every object decoded strictly into the
# k8s.io/api types, its refused values and helm lint's checks. Its own module (tools/helm:
# never in the gateway's go.mod; it reads the gateway's config package through a replace).
# On a fresh machine 250 MB of modules and 2.5 CPU-minutes (7 minutes measured on 2 cores
# shared with other builds); seconds after, from the build cache.
.PHONY: test-helm
test-helm:
	cd tools/helm && $(GO) test -count=1 ./...

# make release: the binaries of linux and darwin on amd64 and arm64, their tarballs (with
# LICENSE and README.md), a CycloneDX SBOM of each and SHA256SUMS, in DIST (deploy/release.sh;
# docs/production.md, "Installing a release"). Reproducible: two builds of one commit are
# byte-identical. cyclonedx-gomod is built from its own tools module (tools/cyclonedx: never in
# the gateway's go.mod) into bin/, once.
# make test-release (CI): builds the release twice and compares (test/release); PLATFORMS
# (os/arch ...) narrows it (CI: linux/amd64, the other three cost 10 CPU-minutes cold).
DIST ?= $(CURDIR)/dist
CYCLONEDX ?= $(CURDIR)/bin/cyclonedx-gomod
.PHONY: release test-release
release: $(CYCLONEDX)
	GO=$(GO) CYCLONEDX=$(CYCLONEDX) deploy/release.sh $(DIST)

test-release: $(CYCLONEDX)
	SLUICE_RELEASE_TEST=1 GO=$(GO) CYCLONEDX=$(CYCLONEDX) $(GO) test -count=1 -timeout 30m ./test/release/

$(CYCLONEDX): tools/cyclonedx/go.mod tools/cyclonedx/go.sum
	cd tools/cyclonedx && $(GO) build -trimpath -o $(CYCLONEDX) github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod

# make vulncheck: govulncheck (tools/vuln, golang.org/x/vuln) over the gateway's packages
# against the Go vulnerability database (vuln.go.dev: needs the network). It fails on a
# vulnerability in code the gateway calls; one only in a module it requires, or in a package
# it imports but never reaches, is listed without failing (govulncheck -show verbose names
# them). CI runs it when the database answers and says it skipped it when it does not.
GOVULNCHECK ?= $(CURDIR)/bin/govulncheck
.PHONY: vulncheck
vulncheck: $(GOVULNCHECK)
	$(GOVULNCHECK) ./...

$(GOVULNCHECK): tools/vuln/go.mod tools/vuln/go.sum
	cd tools/vuln && $(GO) build -trimpath -o $(GOVULNCHECK) golang.org/x/vuln/cmd/govulncheck
