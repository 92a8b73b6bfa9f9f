//go:build e2e

package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// The client floor of the WatchList informer start: the same informer
// code path decoding the same stream with no server work. The stream a
// server sent is captured once, then served from memory by a local
// plain-HTTP server in one write, so the informer's time against it is
// the client's own part (request, read, decode, store) and the rest of a
// server's figure is the server's.

// watchCapture is one server's WatchList response as the informer read it.
type watchCapture struct {
	contentType string
	body        []byte
}

// captureWatchList runs a protobuf pod informer against s, recording the
// response to its single watch request.
func captureWatchList(ctx context.Context, s *server, node string) (*watchCapture, error) {
	rec := &recorder{}
	cfg := protoConfig(s.cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &recordingTransport{next: rt, rec: rec} })
	if _, _, err := startInformer(ctx, cfg, s.name, node); err != nil {
		return nil, err
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.watches != 1 || rec.others != 0 {
		return nil, fmt.Errorf("%s informer sent %d watch and %d other requests, want one WatchList", s.name, rec.watches, rec.others)
	}
	return &watchCapture{contentType: rec.contentType, body: rec.body}, nil
}

// replayInformer starts the same informer against a local server that
// answers its watch with c and returns the time until it has synced and
// how many pods it holds.
func replayInformer(ctx context.Context, c *watchCapture, node string) (time.Duration, int, error) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query().Get("watch"); q != "true" && q != "1" {
			http.Error(w, "the replay serves only the captured WatchList", http.StatusNotImplemented)
			return
		}
		w.Header().Set("Content-Type", c.contentType)
		_, _ = w.Write(c.body)
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	defer srv.CloseClientConnections()
	cfg := &rest.Config{Host: srv.URL, QPS: clientQPS, Burst: clientBurst}
	return startInformer(ctx, protoConfig(cfg), "replay", node)
}

// recorder holds what recordingTransport saw.
type recorder struct {
	mu              sync.Mutex
	watches, others int    // requests, guarded by mu
	contentType     string // of the watch response, guarded by mu
	body            []byte // of the watch response so far, guarded by mu
}

// recordingTransport tees watch response bodies into rec.
type recordingTransport struct {
	next http.RoundTripper
	rec  *recorder
}

func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	t.rec.mu.Lock()
	defer t.rec.mu.Unlock()
	if q := req.URL.Query().Get("watch"); q != "true" && q != "1" {
		t.rec.others++
		return resp, err
	}
	t.rec.watches++
	if err == nil {
		t.rec.contentType = resp.Header.Get("Content-Type")
		resp.Body = &teeBody{ReadCloser: resp.Body, rec: t.rec}
	}
	return resp, err
}

// teeBody copies what is read from a body into rec.
type teeBody struct {
	io.ReadCloser
	rec *recorder
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.rec.mu.Lock()
	b.rec.body = append(b.rec.body, p[:n]...)
	b.rec.mu.Unlock()
	return n, err
}
