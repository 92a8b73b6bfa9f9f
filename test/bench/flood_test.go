//go:build e2e

package bench

import (
	"bytes"
	"net/http"
	"os"
	"testing"
)

// TestBenchFlood is make bench's flood part: the kubelet's p99 on its door
// alone and during a 450-connection flood of forged tokens. It writes its
// own section of the Markdown file BENCH_REPORT names.
func TestBenchFlood(t *testing.T) {
	report := os.Getenv(envReport)
	if report == "" {
		t.Skipf("%s is unset; run make bench", envReport)
	}
	r := runFlood(t)
	var b bytes.Buffer
	r.writeMarkdown(&b)
	t.Logf("\n%s", b.String())
	if err := writeSection(report, floodBeginMarker, floodEndMarker, b.Bytes()); err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]floodWindowResult{"alone": r.alone, "during the flood": r.flood} {
		if len(w.latencies) == 0 || w.codes[http.StatusUnauthorized] > 0 {
			t.Errorf("the kubelet %s: got %v, want requests and no 401", name, w.codes)
		}
	}
}
