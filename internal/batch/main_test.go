package batch_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every runner's goroutines end at Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
