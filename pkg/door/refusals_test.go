package door

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

func TestRefusalLogIsRateLimited(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	var out bytes.Buffer
	r := newRefusalLog(clk, slog.New(slog.NewTextHandler(&out, nil)))
	for range 1000 {
		r.note("unauthenticated request")
	}
	if got := strings.Count(out.String(), "\n"); got != 0 {
		t.Fatalf("1000 refusals within %s: got %d log lines, want 0", refusalLogInterval, got)
	}
	clk.Step(refusalLogInterval)
	r.note("unauthenticated request")
	r.note("unauthenticated request")
	if got := strings.Count(out.String(), "\n"); got != 1 || !strings.Contains(out.String(), "count=1001") {
		t.Fatalf("after %s: got %q, want one line counting 1001 refusals", refusalLogInterval, out.String())
	}
}
