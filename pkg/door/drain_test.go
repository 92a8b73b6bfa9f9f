package door

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// net/http's own graceful shutdown of an idle HTTP/2 connection waits this
// long after its GOAWAY (goAwayTimeout); a drained door must stop well
// before.
const netHTTPGoAwayWait = time.Second

// drainedServer is a TLS server speaking HTTP/2 whose handler and
// connections d counts, serving h.
func drainedServer(t *testing.T, d *Drain, h http.Handler) (*httptest.Server, *http.Client) {
	t.Helper()
	srv := httptest.NewUnstartedServer(d.Handler(h))
	srv.EnableHTTP2 = true
	srv.Config.ConnState = d.ConnState
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, srv.Client()
}

// shutdownAsync runs d.Shutdown and reports its end on the channel.
func shutdownAsync(d *Drain, srv *httptest.Server) <-chan error {
	done := make(chan error, 1)
	go func() { done <- d.Shutdown(context.Background(), srv.Config) }()
	return done
}

// stepWhenWaiting advances clock by DrainGrace once Shutdown waits on it.
func stepWhenWaiting(t *testing.T, clock *clocktesting.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !clock.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("shutdown never waited for its grace")
		}
		time.Sleep(time.Millisecond)
	}
	clock.Step(DrainGrace)
}

func TestDrainClosesIdleHTTP2ConnectionsAfterTheGrace(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Now())
	d := NewDrain(clock)
	srv, client := drainedServer(t, d, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("got %s, want HTTP/2 (an idle HTTP/2 connection is what kept a shutdown waiting)", resp.Proto)
	}
	start := time.Now()
	done := shutdownAsync(d, srv)
	stepWhenWaiting(t, clock)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	case <-time.After(netHTTPGoAwayWait):
		t.Fatalf("shutdown still waiting %s after it began, want it done once the grace passed", netHTTPGoAwayWait)
	}
	if took := time.Since(start); took >= netHTTPGoAwayWait/2 {
		t.Fatalf("shutdown took %s, want well under net/http's %s", took, netHTTPGoAwayWait)
	}
}

func TestDrainLetsInFlightRequestsFinish(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Now())
	d := NewDrain(clock)
	entered, release := make(chan struct{}), make(chan struct{})
	srv, client := drainedServer(t, d, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(entered)
		<-release
		_, _ = io.WriteString(w, "done")
	}))
	got := make(chan string, 1)
	go func() {
		resp, err := client.Get(srv.URL)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- string(b)
	}()
	<-entered
	done := shutdownAsync(d, srv)
	clock.Step(10 * DrainGrace) // no timer yet: a request is in flight
	select {
	case err := <-done:
		t.Fatalf("shutdown returned (%v) while a request was in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if body := <-got; body != "done" {
		t.Fatalf("in-flight request got %q, want %q", body, "done")
	}
	stepWhenWaiting(t, clock)
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

func TestDrainCountsRequestsAndFreshConnections(t *testing.T) {
	d := NewDrain(nil)
	if _, idle := d.idleNow(); !idle {
		t.Fatal("new drain: got busy, want idle")
	}
	d.enter()
	d.enter()
	d.leave()
	if _, idle := d.idleNow(); idle {
		t.Fatal("one request in flight: got idle, want busy")
	}
	d.leave()
	if _, idle := d.idleNow(); !idle {
		t.Fatal("all requests done: got busy, want idle")
	}
}
