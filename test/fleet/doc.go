// Package fleet tests the production shape on loopback (deploy/fleet.sh): redis-server, the
// mock upstream, gateway replicas and nginx with the compose configuration. The tests run with
// make test-fleet.
package fleet
