// Package helm holds the tests of the Helm chart (deploy/helm/sluice): they load and render
// it with Helm's Go SDK, offline, and decode every object strictly into the k8s.io/api types.
// Its own module, like tools/dex and tools/jaeger: Helm and its dependencies never enter the
// gateway's go.mod.
package helm
