package operations

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// The watchdog asks the door the daemon reaches itself when there is one,
// and the checks in process otherwise.
func TestWatchdogProbe(t *testing.T) {
	o := newTestView(clocktesting.NewFakeClock(time.Unix(0, 0)))
	o.syncExited.Store(1) // in process, the daemon is not live
	door := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != PathLivez {
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(door.Close)
	for _, tc := range []struct {
		name    string
		addr    net.Addr
		ok      bool
		wantErr string
	}{
		{"through the door", door.Listener.Addr(), true, ""},
		{"no door", nil, false, "sync-loops"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := o.WatchdogProbe(tc.addr, false, tc.ok)(context.Background())
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("got %v, want an error containing %q (none if empty)", err, tc.wantErr)
			}
		})
	}
}
