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

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Client floors: the same client code path decoding the same response with
// no server work. A response a server sent is captured once, then served
// from memory by a local plain-HTTP server in one write, so the client's
// time against it is its own part (request, read, decode, store) and the
// rest of a server's figure is the server's. The WatchList informer start
// and the typed LISTs have one each.

// watchCapture is one server's response: a WatchList as the informer read
// it, or a LIST body.
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
	srv := replayServer(c, true)
	defer srv.Close()
	defer srv.CloseClientConnections()
	return startInformer(ctx, protoConfig(replayConfig(srv)), "replay", node)
}

// replayServer answers with c: only watch requests when watch is set, which
// it then holds open as a watch, every request otherwise.
func replayServer(c *watchCapture, watch bool) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query().Get("watch"); watch != (q == "true" || q == "1") {
			http.Error(w, "the replay serves only the captured request's kind", http.StatusNotImplemented)
			return
		}
		w.Header().Set("Content-Type", c.contentType)
		_, _ = w.Write(c.body)
		if watch {
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
		}
	}))
}

func replayConfig(srv *httptest.Server) *rest.Config {
	return &rest.Config{Host: srv.URL, QPS: ClientQPS, Burst: ClientBurst}
}

// captureList reads the body of the node's pod LIST from s in one media
// type.
func captureList(ctx context.Context, s *server, node, accept string) (*watchCapture, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+podsPath(node), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s capture LIST %s: %w", s.name, accept, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s capture LIST %s: %s %v", s.name, accept, resp.Status, err)
	}
	return &watchCapture{contentType: resp.Header.Get("Content-Type"), body: body}, nil
}

// listFloors are a server's captured pod LIST bodies, JSON and protobuf.
type listFloors struct {
	json, proto *watchCapture
}

func captureLists(ctx context.Context, s *server, node string) (listFloors, error) {
	j, err := captureList(ctx, s, node, mediaJSON)
	if err != nil {
		return listFloors{}, err
	}
	p, err := captureList(ctx, s, node, mediaProtobuf)
	return listFloors{json: j, proto: p}, err
}

// replay times the typed LISTs of measureLists against the
// captured bodies: JSON, then protobuf.
func (f listFloors) replay(ctx context.Context, node string, want int) (jsonFloor, protoFloor time.Duration, err error) {
	for _, c := range []struct {
		body  *watchCapture
		proto bool
		out   *time.Duration
	}{{f.json, false, &jsonFloor}, {f.proto, true, &protoFloor}} {
		srv := replayServer(c.body, false)
		cfg := jsonConfig(replayConfig(srv))
		if c.proto {
			cfg = protoConfig(cfg)
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err == nil {
			var n int
			if *c.out, n, err = typedList(ctx, cs, node); err == nil && n != want {
				err = fmt.Errorf("replayed LIST holds %d pods, want %d", n, want)
			}
		}
		srv.Close()
		if err != nil {
			return 0, 0, fmt.Errorf("typed LIST client floor: %w", err)
		}
	}
	return jsonFloor, protoFloor, nil
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
