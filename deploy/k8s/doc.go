// Package k8s holds the Kubernetes examples of the production shape (docs/production.md)
// and the test that decodes each manifest strictly into the k8s.io/api types,
// offline: no cluster and no schema download.
package k8s
