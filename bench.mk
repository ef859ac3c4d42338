# bench-load: the load benchmark of issue 5 (cmd/sluicebench). It starts the mock, the gateway
# and a bare reverse proxy as child processes on loopback, drives the gateway and the proxy
# with the same load and prints a markdown table of the ratios against the targets; a few
# minutes at most. BENCHFLAGS passes flags, e.g. BENCHFLAGS='-quick' or
# BENCHFLAGS='-duration 5s -scenarios nonstream -cpuprofile gateway.prof'.
#
# With BIFROST_BIN (a built bifrost-http) set, Bifrost runs as a peer beside the proxy on the
# same mock (BIFROST_DIR: its app dir, where the bench writes config.json; a temporary one
# when unset). Bifrost reaches out to the internet when it starts, so the whole bench then
# runs in a network namespace of its own (`unshare -rn`, loopback up): the mock, the servers
# and the load share its loopback and nothing leaves the machine. README "Performance" has
# the recipe that builds Bifrost outside the repository.
GO ?= go
BENCHFLAGS ?=
BENCHBIN ?= $(or $(TMPDIR),/tmp)/sluicebench

.PHONY: bench-load
bench-load:
ifeq ($(BIFROST_BIN),)
	$(GO) run ./cmd/sluicebench $(BENCHFLAGS)
else
	$(GO) build -o $(BENCHBIN) ./cmd/sluicebench
	unshare -rn sh -c 'ip link set lo up && exec "$$0" "$$@"' $(BENCHBIN) $(BENCHFLAGS)
endif

# bench-logs: the request log at the sizes of issue 50 (docs/request-log.md, "At the issue's
# sizes"): BenchmarkUsage over LOG_RECORDS records in SQLite (the file kept in LOG_BENCH_DIR
# and reused by the next run) and LOG_PG_RECORDS in PostgreSQL (initdb/pg_ctl, as the tests
# do; from the rollups only: the records alone take minutes a query at 10 M), both bulk
# loaded (some 4 min for 2 M SQLite records and 30 for 10 M PostgreSQL ones on 2 busy
# cores; 20 GB of disk for those), the writer's sustained rate with rollups on, and a
# 1 M-record export's memory. The median of each query is its p50-ms.
LOG_RECORDS ?= 2000000
LOG_PG_RECORDS ?= 10000000
LOG_BENCH_DIR ?= $(or $(TMPDIR),/tmp)/sluice-logs-bench

.PHONY: bench-logs
bench-logs:
	mkdir -p $(LOG_BENCH_DIR)
	SLUICE_BENCH_RECORDS=$(LOG_RECORDS) SLUICE_BENCH_DIR=$(LOG_BENCH_DIR) $(GO) test -run '^$$' -bench 'BenchmarkUsage/sqlite' -benchtime 20x -v -timeout 3h ./internal/logstore
	SLUICE_BENCH_RECORDS=$(LOG_PG_RECORDS) SLUICE_BENCH_ROLLUPS_ONLY=1 $(GO) test -run '^$$' -bench 'BenchmarkUsage/postgres' -benchtime 20x -v -timeout 3h ./internal/logstore
	$(GO) test -run '^$$' -bench 'BenchmarkWriter$$' -benchtime 50000x -timeout 1h ./internal/logstore
	SLUICE_EXPORT_RECORDS=1000000 SLUICE_EXPORT_DB=$(LOG_BENCH_DIR)/export-1m.db $(GO) test -run '^TestExportMemory$$' -v -count=1 -timeout 1h ./internal/dialect/admin
