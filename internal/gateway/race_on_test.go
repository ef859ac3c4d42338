//go:build race

package gateway

// raceOn: the race detector is on, and allocations are its as well as the code's.
const raceOn = true
