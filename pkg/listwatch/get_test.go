package listwatch

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
)

func TestGetObject(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	tests := []struct {
		name, path, want string
	}{
		{"namespaced", "/api/v1/namespaces/default/pods/web-1",
			podJSON("default", "web-1", 11, "node-a", "Running", map[string]string{"app": "web", "tier": "front"})},
		{"cluster-scoped", "/api/v1/nodes/node-b", nodeJSON("node-b", 6, true)},
		{"namespace", "/api/v1/namespaces/kube-system", namespaceJSON("kube-system", 4)},
		{"group", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a",
			leaseJSON("kube-node-lease", "node-a", 7)},
		{"older resourceVersion", "/api/v1/nodes/node-b?resourceVersion=2", nodeJSON("node-b", 6, true)},
		{"current resourceVersion", "/api/v1/nodes/node-b?resourceVersion=20", nodeJSON("node-b", 6, true)},
		{"resourceVersion 0", "/api/v1/nodes/node-b?resourceVersion=0", nodeJSON("node-b", 6, true)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := MustGet(t, srv.URL+tt.path)
			if r.code != http.StatusOK {
				t.Fatalf("got status %d body %s, want 200", r.code, r.body)
			}
			if got := strings.TrimSuffix(r.body, "\n"); got != tt.want {
				t.Errorf("got body %s, want %s", got, tt.want)
			}
			if got := r.header.Get("Content-Type"); got != response.MediaTypeJSON {
				t.Errorf("got Content-Type %q, want %q", got, response.MediaTypeJSON)
			}
		})
	}
}

func TestGetErrors(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	tests := []struct {
		name, path string
		wantCode   int
		wantBody   string // exact body when set
		wantReason string
	}{
		{name: "core not found", path: "/api/v1/namespaces/default/pods/nope", wantCode: 404,
			wantBody: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"nope\" not found","reason":"NotFound","details":{"name":"nope","kind":"pods"},"code":404}`},
		{name: "group not found", path: "/apis/coordination.k8s.io/v1/namespaces/default/leases/nope", wantCode: 404,
			wantBody: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"leases.coordination.k8s.io \"nope\" not found","reason":"NotFound","details":{"name":"nope","group":"coordination.k8s.io","kind":"leases"},"code":404}`},
		{name: "object in another namespace", path: "/api/v1/namespaces/kube-system/pods/web-1", wantCode: 404, wantReason: "NotFound"},
		{name: "bad resourceVersion", path: "/api/v1/nodes/node-a?resourceVersion=abc", wantCode: 400,
			wantBody: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid resource version: resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax","reason":"BadRequest","code":400}`},
		{name: "negative resourceVersion", path: "/api/v1/nodes/node-a?resourceVersion=-1", wantCode: 400, wantReason: "BadRequest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := MustGet(t, srv.URL+tt.path)
			st := MustStatus(t, r)
			if r.code != tt.wantCode {
				t.Fatalf("got status %d, want %d", r.code, tt.wantCode)
			}
			if tt.wantBody != "" && strings.TrimSuffix(r.body, "\n") != tt.wantBody {
				t.Errorf("got body %s, want %s", r.body, tt.wantBody)
			}
			if tt.wantReason != "" && string(st.Reason) != tt.wantReason {
				t.Errorf("got reason %q, want %q", st.Reason, tt.wantReason)
			}
		})
	}
}

func TestTooLargeResourceVersion(t *testing.T) {
	for _, path := range []string{
		"/api/v1/nodes/node-a?resourceVersion=25",
		"/api/v1/nodes?resourceVersion=25",
		"/api/v1/nodes?resourceVersion=25&resourceVersionMatch=NotOlderThan",
	} {
		t.Run(path, func(t *testing.T) {
			f := newFixture(t)
			fc := clocktesting.NewFakeClock(time.Now())
			srv := MustServer(t, Config{Caches: f.caches(), Clock: fc})
			done := goGet(srv.URL + path)
			waitForWaiters(t, fc, 1)
			fc.Step(tooLargeRVWait)
			r := MustReceive(t, done)
			MustStatus(t, r)
			want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: Too large resource version: 25, current: 20","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"code":504}`
			if got := strings.TrimSuffix(r.body, "\n"); got != want {
				t.Errorf("got body %s, want %s", got, want)
			}
		})
	}
}

func TestTooLargeResourceVersionArrives(t *testing.T) {
	f := newFixture(t)
	fc := clocktesting.NewFakeClock(time.Now())
	srv := MustServer(t, Config{Caches: f.caches(), Clock: fc})
	done := goGet(srv.URL + "/api/v1/nodes/node-c?resourceVersion=21")
	waitForWaiters(t, fc, 1)
	MustApply(t, f.nodes, 21, watch.Added, nodeJSON("node-c", 21, false))
	r := MustReceive(t, done)
	if r.code != http.StatusOK {
		t.Fatalf("got status %d body %s, want 200", r.code, r.body)
	}
	if got, want := strings.TrimSuffix(r.body, "\n"), nodeJSON("node-c", 21, false); got != want {
		t.Errorf("got body %s, want %s", got, want)
	}
}
