# A static gateway binary on a distroless base, running as non-root.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags=-s -o /out/gateway ./cmd/gateway \
 && CGO_ENABLED=0 go build -trimpath -ldflags=-s -o /out/mockllm ./cmd/mockllm

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/gateway /out/mockllm /usr/local/bin/
COPY deploy/gateway.yaml /etc/sluice/gateway.yaml
USER nonroot
EXPOSE 8080
HEALTHCHECK --interval=5s --timeout=2s --retries=3 CMD ["/usr/local/bin/gateway", "--check", "http://127.0.0.1:8080/readyz"]
ENTRYPOINT ["/usr/local/bin/gateway", "--config", "/etc/sluice/gateway.yaml"]
