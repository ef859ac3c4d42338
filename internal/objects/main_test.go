package objects

import (
	"testing"

	"go.uber.org/goleak"
)

// An upload's copy runs in a goroutine of its own: none outlives its request.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
