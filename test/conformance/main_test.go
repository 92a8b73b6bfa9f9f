//go:build e2e

package conformance

import (
	"os"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

func TestMain(m *testing.M) {
	if os.Getenv(envInformerChild) != "" {
		os.Exit(informerChild())
	}
	os.Exit(framework.Main(m))
}
