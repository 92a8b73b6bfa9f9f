package cloudsync

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// openingTimeout bounds each wait of these tests.
const openingTimeout = 10 * time.Second

func send(ctx context.Context, rt http.RoundTripper, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	return rt.RoundTrip(req)
}

// TestOpeningLimitPacesABurst: of a burst of requests, at most the limit
// await the cloud's answer at once, and every one is answered.
func TestOpeningLimitPacesABurst(t *testing.T) {
	const limit, burst = 3, 30
	var inFlight, most atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(10 * time.Millisecond)
		inFlight.Add(-1)
	}))
	defer srv.Close()
	rt := newOpeningLimit(limit, limit)(srv.Client().Transport)
	var wg sync.WaitGroup
	for i := range burst {
		wg.Go(func() {
			resp, err := send(t.Context(), rt, srv.URL)
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			_ = resp.Body.Close()
		})
	}
	wg.Wait()
	if got := most.Load(); got > limit {
		t.Errorf("got %d requests awaiting the cloud at once, want at most %d", got, limit)
	}
}

// TestOpeningLimitFreesAtHeaders: a watch holds its place only until its
// headers arrive, so more watches than the limit stream at once.
func TestOpeningLimitFreesAtHeaders(t *testing.T) {
	const limit, watches = 2, 5
	end := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select { // a watch with no event yet
		case <-end:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(end)
	rt := newOpeningLimit(limit, limit)(srv.Client().Transport)
	ctx, cancel := context.WithTimeout(t.Context(), openingTimeout)
	defer cancel()
	for i := range watches {
		resp, err := send(ctx, rt, srv.URL)
		if err != nil {
			t.Fatalf("watch %d of %d with a limit of %d: %v", i+1, watches, limit, err)
		}
		defer func() { _ = resp.Body.Close() }()
	}
}

// TestOpeningLimitWaitEndsWithContext: a request waiting for a place
// gives up when its context ends.
func TestOpeningLimitWaitEndsWithContext(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) > 1 {
			return // answered at once, had it been sent
		}
		select { // no headers until released
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	rt := newOpeningLimit(1, 1)(srv.Client().Transport)
	held, cancelHeld := context.WithCancel(t.Context())
	defer cancelHeld()
	go func() { _, _ = send(held, rt, srv.URL) }()
	time.Sleep(50 * time.Millisecond) // the first takes the only place
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := send(ctx, rt, srv.URL); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v waiting behind a request with no answer, want %v", err, context.DeadlineExceeded)
	}
}

// TestOpeningLimitKeepsPlacesForForeground: Background requests take at
// most their share of the places, so a request the node waits for is
// answered while they all await the cloud.
func TestOpeningLimitKeepsPlacesForForeground(t *testing.T) {
	const limit, background, burst = 3, 1, 4
	release := make(chan struct{})
	var waiting, most atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/held" {
			return
		}
		n := waiting.Add(1)
		defer waiting.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		select { // no headers until released
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	rt := newOpeningLimit(limit, background)(srv.Client().Transport)
	ctx, cancel := context.WithTimeout(t.Context(), openingTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for range burst {
		wg.Go(func() {
			if resp, err := send(Background(ctx), rt, srv.URL+"/held"); err == nil {
				_ = resp.Body.Close()
			}
		})
	}
	for waiting.Load() < background {
		time.Sleep(time.Millisecond)
	}
	resp, err := send(ctx, rt, srv.URL+"/new")
	if err != nil {
		t.Fatalf("foreground request behind %d background ones: %v", burst, err)
	}
	_ = resp.Body.Close()
	close(release)
	wg.Wait()
	if got := most.Load(); got != background {
		t.Errorf("got %d background requests awaiting the cloud at once, want %d", got, background)
	}
}

// TestOpeningLimitChecksOnceItHasAPlace: a request's check runs once it
// has its place, just before it is sent: one decided against while it
// waited is dropped unsent, with the check's error; one whose check
// passes is sent.
func TestOpeningLimitChecksOnceItHasAPlace(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	sent := map[string]int{} // guarded by mu
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent[r.URL.Path]++
		mu.Unlock()
		if r.URL.Path == "/first" {
			<-release // no headers until released
		}
	}))
	defer srv.Close()
	rt := newOpeningLimit(1, 1)(srv.Client().Transport)
	ctx, cancel := context.WithTimeout(t.Context(), openingTimeout)
	defer cancel()
	first := make(chan error, 1)
	go func() {
		resp, err := send(ctx, rt, srv.URL+"/first")
		if err == nil {
			_ = resp.Body.Close()
		}
		first <- err
	}()
	time.Sleep(50 * time.Millisecond) // the first takes the only place

	stale := errors.New("decided against while waiting")
	var decided atomic.Bool
	dropped := make(chan error, 1)
	go func() {
		_, err := send(WithSendCheck(ctx, func() error {
			if decided.Load() {
				return stale
			}
			return nil
		}), rt, srv.URL+"/dropped")
		dropped <- err
	}()
	time.Sleep(50 * time.Millisecond) // it waits for the place
	decided.Store(true)
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("first request: %v", err)
	}
	if err := <-dropped; !errors.Is(err, stale) {
		t.Errorf("request decided against while it waited: got %v, want %v", err, stale)
	}
	resp, err := send(WithSendCheck(ctx, func() error { return nil }), rt, srv.URL+"/kept")
	if err != nil {
		t.Fatalf("request whose check passes: %v", err)
	}
	_ = resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if sent["/dropped"] != 0 || sent["/kept"] != 1 {
		t.Errorf("got %d dropped and %d kept requests sent, want 0 and 1", sent["/dropped"], sent["/kept"])
	}
}
