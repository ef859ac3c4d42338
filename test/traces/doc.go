// Package traces checks what a real tracing backend receives from the gateway: Jaeger v2
// (the tools/jaeger module, built by make test-fleet) takes the gateway's OTLP spans in and
// the tests read them back through Jaeger's query API. They also scrape the gateway's
// /metrics with Prometheus's own text parser. The tests run with make test-fleet
// (SLUICE_JAEGER names the binary) and are skipped otherwise.
package traces
