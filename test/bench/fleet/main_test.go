//go:build e2e

package fleet

import (
	"os"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/direct"
	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

func TestMain(m *testing.M) {
	if direct.RunChildIfAsked() {
		os.Exit(0)
	}
	os.Exit(framework.Main(m))
}
