package retrieval_test

import (
	"flag"
	"testing"

	"go.uber.org/goleak"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
