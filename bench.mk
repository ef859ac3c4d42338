# bench-load: the load benchmark of issue 5 (cmd/sluicebench). It starts the mock, the gateway
# and a bare reverse proxy as child processes on loopback, drives the gateway and the proxy
# with the same load and prints a markdown table of the ratios against the targets; a few
# minutes at most. BENCHFLAGS passes flags, e.g. BENCHFLAGS='-quick' or
# BENCHFLAGS='-duration 5s -scenarios nonstream -cpuprofile gateway.prof'.
GO ?= go
BENCHFLAGS ?=

.PHONY: bench-load
bench-load:
	$(GO) run ./cmd/sluicebench $(BENCHFLAGS)
