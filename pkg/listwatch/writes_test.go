package listwatch

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
)

// cloudReply is what the fake cloud answers every request with.
type cloudReply struct {
	code        int
	contentType string
	gzip        bool
	chunked     bool // no Content-Length
	body        string
}

// newReplyCloud is the cloud at the network edge answering every request
// with reply.
func newReplyCloud(t *testing.T, reply cloudReply) *rest.Config {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := []byte(reply.body)
		if reply.gzip {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			_, _ = zw.Write(body)
			_ = zw.Close()
			body = b.Bytes()
			w.Header().Set("Content-Encoding", "gzip")
		}
		w.Header().Set("Content-Type", reply.contentType)
		if !reply.chunked {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
		w.WriteHeader(reply.code)
		for len(body) > 0 { // several writes, so a large body is chunked
			n := min(len(body), 4096)
			_, _ = w.Write(body[:n])
			w.(http.Flusher).Flush()
			body = body[n:]
		}
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL, BearerToken: daemonToken}
}

// mustProtobuf encodes a JSON built-in object (a Pod or a Status) as
// kube-apiserver's protobuf serializer does.
func mustProtobuf(t *testing.T, js string) string {
	t.Helper()
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(js), nil, nil)
	if err != nil {
		t.Fatalf("decode %s: %v", js, err)
	}
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), response.MediaTypeProtobuf)
	if !ok {
		t.Fatalf("no protobuf serializer")
	}
	gv := obj.GetObjectKind().GroupVersionKind().GroupVersion()
	b, err := runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, gv), obj)
	if err != nil {
		t.Fatalf("encode protobuf: %v", err)
	}
	return string(b)
}

// A successful write's returned resourceVersion becomes the floor of the
// resource it changed (a subresource's parent); other answers change
// nothing, and every body reaches the client unchanged.
func TestProxiedWriteRecordsResourceVersion(t *testing.T) {
	pod := podJSON("default", "web-1", 25, "node-a", "Running", nil)
	huge := podJSON("default", "web-1", 25, "node-a", "Running", map[string]string{"big": strings.Repeat("x", writeScanLimit)})
	status := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"web-1","kind":"pods","uid":"u"}}`
	tests := []struct {
		name, method, path string
		reply              cloudReply
		wantPods, wantCMs  uint64
	}{
		{"create", http.MethodPost, "/api/v1/namespaces/default/pods", cloudReply{code: 201, body: pod}, 25, 0},
		{"status subresource", http.MethodPut, "/api/v1/namespaces/default/pods/web-1/status", cloudReply{code: 200, body: pod}, 25, 0},
		{"patch, chunked", http.MethodPatch, "/api/v1/namespaces/default/pods/web-1", cloudReply{code: 200, chunked: true, body: pod}, 25, 0},
		{"gzip", http.MethodPatch, "/api/v1/namespaces/default/pods/web-1", cloudReply{code: 200, gzip: true, body: pod}, 25, 0},
		{"delete returns the object", http.MethodDelete, "/api/v1/namespaces/default/pods/web-1", cloudReply{code: 200, body: pod}, 25, 0},
		{"delete returns a Status", http.MethodDelete, "/api/v1/namespaces/default/pods/web-1", cloudReply{code: 200, body: status}, 0, 0},
		{"other resource", http.MethodPut, "/api/v1/namespaces/default/configmaps/settings",
			cloudReply{code: 200, body: configMapJSON("default", "settings", 26, nil)}, 0, 26},
		{"failed write", http.MethodPut, "/api/v1/namespaces/default/pods/web-1", cloudReply{code: 409, body: pod}, 0, 0},
		{"protobuf", http.MethodPut, "/api/v1/namespaces/default/pods/web-1/status",
			cloudReply{code: 200, contentType: response.MediaTypeProtobuf, body: mustProtobuf(t, pod)}, 25, 0},
		{"protobuf Status", http.MethodDelete, "/api/v1/namespaces/default/pods/web-1",
			cloudReply{code: 200, contentType: response.MediaTypeProtobuf, body: mustProtobuf(t, status)}, 0, 0},
		{"other media type", http.MethodPut, "/api/v1/namespaces/default/pods/web-1",
			cloudReply{code: 200, contentType: "application/yaml", body: pod}, 0, 0},
		{"unconfigured resource", http.MethodPut, "/api/v1/namespaces/default/secrets/s", cloudReply{code: 200, body: pod}, 0, 0},
		{"too large, chunked", http.MethodPut, "/api/v1/namespaces/default/pods/web-1", cloudReply{code: 200, chunked: true, body: huge}, 0, 0},
		{"too large", http.MethodPut, "/api/v1/namespaces/default/pods/web-1", cloudReply{code: 200, body: huge}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.reply.contentType == "" {
				tc.reply.contentType = response.MediaTypeJSON
			}
			f := newFixture(t)
			s, err := newServer(Config{Caches: f.caches(), Cloud: newReplyCloud(t, tc.reply)})
			if err != nil {
				t.Fatalf("newServer: %v", err)
			}
			srv := httptest.NewServer(asNode(s.routes()))
			t.Cleanup(srv.Close)
			r := MustDo(t, tc.method, srv.URL+tc.path, nil, "{}")
			if r.code != tc.reply.code || r.body != tc.reply.body {
				t.Errorf("got %d with %d bytes, want the cloud's %d with %d bytes", r.code, len(r.body), tc.reply.code, len(tc.reply.body))
			}
			if got := s.writtenRV(f.pods); got != tc.wantPods {
				t.Errorf("got pods floor %d, want %d", got, tc.wantPods)
			}
			if got := s.writtenRV(f.configMaps); got != tc.wantCMs {
				t.Errorf("got configmaps floor %d, want %d", got, tc.wantCMs)
			}
		})
	}
}

// After a proxied write returned RV 25, reads with RV unset from any client
// wait for the cache to reach 25, or serve it as it is after
// readYourWritesWait; reads with an RV do not wait for writes.
func TestReadYourWrites(t *testing.T) {
	const podPath = "/api/v1/namespaces/default/pods/web-1"
	tests := []struct {
		name, path string
		applied    bool   // the sync brings RV 25 while the read waits
		wantRV     string // in the answer: the object's or the list's
	}{
		{"get, sync catches up", podPath, true, "25"},
		{"get, sync stays behind", podPath, false, "11"},
		{"list, sync catches up", "/api/v1/namespaces/default/pods", true, "25"},
		{"list, sync stays behind", "/api/v1/namespaces/default/pods", false, "20"},
		{"watchlist, sync catches up", "/api/v1/namespaces/default/pods?" + watchListQuery, true, "25"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			fc := clocktesting.NewFakeClock(time.Now())
			cloud := newReplyCloud(t, cloudReply{code: 200, contentType: response.MediaTypeJSON,
				body: podJSON("default", "web-1", 25, "node-a", "Succeeded", nil)})
			srv := MustServer(t, Config{Caches: f.caches(), Cloud: cloud, Clock: fc})
			if r := MustDo(t, http.MethodPut, srv.URL+podPath+"/status", nil, "{}"); r.code != http.StatusOK {
				t.Fatalf("got write status %d, want 200", r.code)
			}
			if strings.Contains(tc.path, "watch=true") {
				testWatchListReadsWrite(t, f, fc, srv.URL+tc.path)
				return
			}
			answer := goGet(srv.URL + tc.path)
			waitForWaiters(t, fc, 1) // the read waits on its bound
			select {
			case r := <-answer:
				t.Fatalf("got an answer (%d) before the cache reached the write", r.code)
			default:
			}
			if tc.applied {
				MustApply(t, f.pods, 25, watch.Modified, podJSON("default", "web-1", 25, "node-a", "Succeeded", nil))
			} else {
				fc.Step(readYourWritesWait)
			}
			r := MustReceive(t, answer)
			if r.code != http.StatusOK || !strings.Contains(r.body, `"resourceVersion":"`+tc.wantRV+`"`) {
				t.Errorf("got %d %s, want 200 at resourceVersion %s", r.code, r.body, tc.wantRV)
			}
			// A read with an RV takes the cache as it is.
			if r := MustGet(t, srv.URL+podPath+"?resourceVersion=0"); r.code != http.StatusOK {
				t.Errorf("got %d for a read at RV 0, want 200", r.code)
			}
		})
	}
}

// testWatchListReadsWrite opens a WatchList with RV unset after a write at
// RV 25 and checks that its snapshot includes the write.
func testWatchListReadsWrite(t *testing.T, f *fixture, fc *clocktesting.FakeClock, url string) {
	t.Helper()
	done := make(chan *watchClient, 1)
	go func() { done <- MustWatch(t, url) }()
	waitForWaiters(t, fc, 1)
	MustApply(t, f.pods, 25, watch.Modified, podJSON("default", "web-1", 25, "node-a", "Succeeded", nil))
	wc := <-done
	checkFrames(t, wc.MustFrames(t, 2), []string{"ADDED default/web-1 25", "ADDED default/web-2 12"})
	if got, want := wc.MustFrame(t), initialEventsEnd("25"); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// writeScanLimit is the proxy's limit on write response bodies it reads.
const writeScanLimit = 2 << 20
