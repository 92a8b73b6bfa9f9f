package offline

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
)

const pvcPath = "/api/v1/namespaces/ns/persistentvolumeclaims/data"

const pvcBody = `{"kind":"PersistentVolumeClaim","metadata":{"name":"data"}}`

// getOnlyCloud answers like the cloud through the proxy: status, JSON,
// gzip when asked.
type getOnlyCloud struct {
	online bool
	status int
	body   string
}

func (c *getOnlyCloud) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !c.online {
		http.Error(w, "offline", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	body := []byte(c.body)
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body)
		_ = zw.Close()
		body = buf.Bytes()
		w.Header().Set("Content-Encoding", "gzip")
	}
	w.WriteHeader(c.status)
	_, _ = w.Write(body)
}

type getOnlyRig struct {
	cloud *getOnlyCloud
	store *MemoryStore
	h     http.Handler
	clock *clocktesting.FakePassiveClock
}

func newGetOnlyRig(maxAnswers int, maxBytes int64) *getOnlyRig {
	rig := &getOnlyRig{cloud: &getOnlyCloud{online: true, status: http.StatusOK, body: pvcBody}, store: NewMemoryStore(),
		clock: clocktesting.NewFakePassiveClock(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))}
	rig.h = WrapGetOnly(rig.cloud, GetOnlyConfig{Store: rig.store, Connected: func() bool { return rig.cloud.online },
		FromNode: FromNode("n1"), MaxAnswers: maxAnswers, MaxBytes: maxBytes, Clock: rig.clock,
		Logger: slog.New(slog.DiscardHandler)})
	return rig
}

var (
	theNode = caller.User{Name: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"}}
	tenant  = caller.User{Name: "system:serviceaccount:ns:reader", Groups: []string{"system:authenticated"}}
)

// get sends a GET as u with header h (name, value pairs).
func (rig *getOnlyRig) get(u caller.User, path string, h ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(h); i += 2 {
		r.Header.Set(h[i], h[i+1])
	}
	r = r.WithContext(caller.WithUser(r.Context(), u))
	rec := httptest.NewRecorder()
	rig.h.ServeHTTP(rec, r)
	return rec
}

func (rig *getOnlyRig) stored(t *testing.T) int {
	t.Helper()
	u, err := rig.store.MetaUsage(context.Background(), GetOnlyPrefix)
	if err != nil {
		t.Fatal(err)
	}
	return u.Count
}

func TestGetOnlyKindsServedOffline(t *testing.T) {
	rig := newGetOnlyRig(0, 0)
	steps := []struct {
		name     string
		online   bool
		status   int
		path     string
		wantCode int
	}{
		{"online read is stored", true, http.StatusOK, pvcPath, http.StatusOK},
		{"offline read is replayed", false, 0, pvcPath, http.StatusOK},
		{"other kind is not stored", true, http.StatusOK, "/api/v1/namespaces/ns/secrets/s", http.StatusOK},
		{"other kind offline", false, 0, "/api/v1/namespaces/ns/secrets/s", http.StatusServiceUnavailable},
		{"the cloud forbids it now", true, http.StatusForbidden, pvcPath, http.StatusForbidden},
		{"forbidden copy is gone offline", false, 0, pvcPath, http.StatusServiceUnavailable},
		{"lease stored", true, http.StatusOK, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1", http.StatusOK},
		{"lease offline", false, 0, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1", http.StatusOK},
	}
	for _, st := range steps {
		rig.cloud.online, rig.cloud.status = st.online, st.status
		if rec := rig.get(theNode, st.path); rec.Code != st.wantCode {
			t.Errorf("%s: got %d %s, want %d", st.name, rec.Code, rec.Body, st.wantCode)
		}
	}
}

func TestGetOnlyAnswersAreTheNodes(t *testing.T) {
	rig := newGetOnlyRig(0, 0)
	for i := range 20 {
		if rec := rig.get(tenant, pvcPath, "Accept", fmt.Sprintf("application/json;x=%d", i)); rec.Code != http.StatusOK {
			t.Fatalf("tenant online: got %d, want 200", rec.Code)
		}
	}
	if got := rig.stored(t); got != 0 {
		t.Fatalf("after a tenant's GETs: got %d stored answers, want 0", got)
	}
	rig.get(theNode, pvcPath)
	rig.cloud.online = false
	if rec := rig.get(tenant, pvcPath); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("tenant offline: got %d, want 503 (the node's answer is not replayed to others)", rec.Code)
	}
	if rec := rig.get(theNode, pvcPath); rec.Code != http.StatusOK {
		t.Errorf("node offline: got %d, want 200", rec.Code)
	}
}

func TestGetOnlyKeyedByNegotiatedType(t *testing.T) {
	rig := newGetOnlyRig(0, 0)
	for _, accept := range []string{"", "application/json", "application/json;q=0.9", "application/json, */*",
		"application/json;x=1", "*/*"} {
		if rec := rig.get(theNode, pvcPath, "Accept", accept); rec.Code != http.StatusOK {
			t.Fatalf("Accept %q: got %d, want 200", accept, rec.Code)
		}
	}
	if got := rig.stored(t); got != 1 {
		t.Errorf("six Accept headers negotiating JSON: got %d stored answers, want 1", got)
	}
	rig.get(theNode, pvcPath, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	if got := rig.stored(t); got != 1 {
		t.Errorf("after a Table GET: got %d stored answers, want 1 (conversions are not stored)", got)
	}
	rig.cloud.online = false
	if rec := rig.get(theNode, pvcPath, "Accept", "application/json;x=2"); rec.Code != http.StatusOK || rec.Body.String() != pvcBody {
		t.Errorf("offline with a new JSON Accept: got %d %q, want 200 %q", rec.Code, rec.Body, pvcBody)
	}
}

func TestGetOnlyGzipStoredDecoded(t *testing.T) {
	rig := newGetOnlyRig(0, 0)
	if rec := rig.get(theNode, pvcPath, "Accept-Encoding", "gzip"); rec.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("online: got Content-Encoding %q, want gzip passed through", rec.Header().Get("Content-Encoding"))
	}
	rig.cloud.online = false
	rec := rig.get(theNode, pvcPath)
	if rec.Code != http.StatusOK || rec.Body.String() != pvcBody || rec.Header().Get("Content-Encoding") != "" {
		t.Errorf("offline: got %d %q encoding %q, want 200 %q unencoded", rec.Code, rec.Body, rec.Header().Get("Content-Encoding"), pvcBody)
	}
}

func TestGetOnlyCaps(t *testing.T) {
	for _, tc := range []struct {
		name       string
		maxAnswers int
		maxBytes   int64
		want       int
	}{
		{"count", 3, 1 << 20, 3},
		{"bytes", 100, 400, 2}, // an answer is about 150 bytes stored
	} {
		t.Run(tc.name, func(t *testing.T) {
			rig := newGetOnlyRig(tc.maxAnswers, tc.maxBytes)
			for i := range 10 {
				rig.get(theNode, fmt.Sprintf("/api/v1/persistentvolumes/pv%d", i))
			}
			if got := rig.stored(t); got != tc.want {
				t.Errorf("got %d stored answers, want %d", got, tc.want)
			}
			rig.get(theNode, "/api/v1/persistentvolumes/pv0") // a refresh of a stored one still fits
			rig.cloud.online = false
			if rec := rig.get(theNode, "/api/v1/persistentvolumes/pv0"); rec.Code != http.StatusOK {
				t.Errorf("stored answer offline: got %d, want 200", rec.Code)
			}
		})
	}
}

func TestGetOnlyRetention(t *testing.T) {
	rig := newGetOnlyRig(0, 0)
	rig.get(theNode, pvcPath)
	rig.clock.SetTime(rig.clock.Now().Add(getOnlyRetention + time.Minute))
	n, err := PruneStored(context.Background(), rig.store, rig.clock.Now(), time.Hour)
	if err != nil || n != 1 {
		t.Fatalf("prune after the retention: got %d, %v; want 1, nil", n, err)
	}
	rig.cloud.online = false
	if rec := rig.get(theNode, pvcPath); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("offline after the prune: got %d, want 503", rec.Code)
	}
}

func TestGetOnlyFullLoggedOncePerInterval(t *testing.T) {
	var logs bytes.Buffer
	rig := newGetOnlyRig(1, 0)
	rig.h = WrapGetOnly(rig.cloud, GetOnlyConfig{Store: rig.store, Connected: func() bool { return true },
		FromNode: FromNode("n1"), MaxAnswers: 1, Clock: rig.clock, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for i := range 10 {
		rig.get(theNode, fmt.Sprintf("/api/v1/persistentvolumes/pv%d", i))
	}
	if got := strings.Count(logs.String(), "caps are reached"); got != 1 {
		t.Errorf("9 answers past the cap: got %d log lines, want 1", got)
	}
	rig.clock.SetTime(rig.clock.Now().Add(fullLogInterval))
	rig.get(theNode, "/api/v1/persistentvolumes/pv-next")
	if got := strings.Count(logs.String(), "caps are reached"); got != 2 {
		t.Errorf("after the interval: got %d log lines, want 2", got)
	}
}

// TestGetOnlyKubeletLease: the kubelet's Lease client adds ?timeout= to
// its GETs, which does not change the answer, so they are stored and
// replayed offline; a GET at a resourceVersion is not. Its renewals (PUT)
// pass through and store nothing: a write to disk every 10 s would cost
// more than the one conflict a replayed Lease causes once online.
func TestGetOnlyKubeletLease(t *testing.T) {
	const lease = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1"
	body := func(rv string) string {
		return `{"kind":"Lease","metadata":{"name":"n1","resourceVersion":"` + rv + `"}}`
	}
	rig := newGetOnlyRig(0, 0)
	steps := []struct {
		name       string
		method     string
		path       string
		online     bool
		cloud      string
		wantCode   int
		wantBody   string
		wantStored int
	}{
		{"kubelet's GET online, with its timeout", http.MethodGet, lease + "?timeout=10s", true, body("1"), http.StatusOK, body("1"), 1},
		{"offline, replayed", http.MethodGet, lease + "?timeout=10s", false, "", http.StatusOK, body("1"), 1},
		{"a renewal, not stored", http.MethodPut, lease + "?timeout=10s", true, body("2"), http.StatusOK, body("2"), 1},
		{"a renewal offline", http.MethodPut, lease, false, "", http.StatusServiceUnavailable, "", 1},
		{"a GET at a resourceVersion, not stored", http.MethodGet, lease + "?resourceVersion=0", true, body("7"), http.StatusOK, body("7"), 1},
		{"offline after them, the GET's copy", http.MethodGet, lease, false, "", http.StatusOK, body("1"), 1},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			rig.cloud.online, rig.cloud.status, rig.cloud.body = st.online, http.StatusOK, st.cloud
			r := httptest.NewRequest(st.method, st.path, strings.NewReader(body("x")))
			r = r.WithContext(caller.WithUser(r.Context(), theNode))
			rec := httptest.NewRecorder()
			rig.h.ServeHTTP(rec, r)
			if rec.Code != st.wantCode {
				t.Fatalf("got %d %s, want %d", rec.Code, rec.Body, st.wantCode)
			}
			if st.wantBody != "" && rec.Body.String() != st.wantBody {
				t.Errorf("body: got %s, want %s", rec.Body, st.wantBody)
			}
			if got := rig.stored(t); got != st.wantStored {
				t.Errorf("stored answers: got %d, want %d", got, st.wantStored)
			}
		})
	}
}
