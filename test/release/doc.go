// Package release tests `make release` (deploy/release.sh): two builds of one commit give the
// same SHA256SUMS, each SBOM names every module linked into its binary, and a release binary
// names the commit it was built from. It builds four platforms twice (minutes with a cold
// build cache), so it runs only with SLUICE_RELEASE_TEST set: make test-release, run by CI.
package release
