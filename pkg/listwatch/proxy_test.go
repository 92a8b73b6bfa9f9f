package listwatch

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
)

// cloudRetryAfter is the retry hint of the 503 while the cloud is unreachable.
var cloudRetryAfter = response.ToStatus(response.CloudUnavailable()).Details.RetryAfterSeconds

func TestWritesAreProxiedWithDaemonCredentials(t *testing.T) {
	f := newFixture(t)
	cloud := newFakeCloud(t)
	srv := MustServer(t, Config{Caches: f.caches(), Cloud: cloud.config()})
	tests := []struct {
		method, path, query, body string
	}{
		{"POST", "/api/v1/namespaces/default/pods", "fieldManager=kubelet", `{"kind":"Pod"}`},
		{"PATCH", "/api/v1/namespaces/default/pods/web-1/status", "", `{"status":{"phase":"Running"}}`},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a", "", `{"kind":"Lease"}`},
		{"DELETE", "/api/v1/namespaces/default/configmaps/settings", "dryRun=All", ""},
		{"POST", "/api/v1/namespaces/default/serviceaccounts/default/token", "", `{"kind":"TokenRequest"}`},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			header := http.Header{
				"Authorization":    {"Bearer client-token"},
				"Impersonate-User": {"system:admin"},
				"Content-Type":     {"application/json"},
			}
			url := srv.URL + tt.path
			if tt.query != "" {
				url += "?" + tt.query
			}
			r := MustDo(t, tt.method, url, header, tt.body)
			if r.code != http.StatusCreated || r.body != cloudAnswer {
				t.Fatalf("got %d %q, want the cloud's 201 %q", r.code, r.body, cloudAnswer)
			}
			reqs := cloud.requests()
			got := reqs[len(reqs)-1]
			want := cloudRequest{method: tt.method, path: tt.path, query: tt.query, auth: "Bearer " + daemonToken, body: tt.body}
			if got != want {
				t.Errorf("cloud got %+v, want %+v", got, want)
			}
		})
	}
}

func TestCloudUnreachable(t *testing.T) {
	f := newFixture(t)
	for name, cloud := range map[string]*rest.Config{"no cloud": nil, "cloud down": downCloud(t)} {
		t.Run(name, func(t *testing.T) {
			srv := MustServer(t, Config{Caches: f.caches(), Cloud: cloud})
			for _, req := range []struct{ method, path string }{
				{"POST", "/api/v1/namespaces/default/pods"},
				{"GET", "/api/v1/namespaces/default/secrets/s"},
				{"GET", "/version"},
			} {
				r := MustDo(t, req.method, srv.URL+req.path, nil, "{}")
				st := MustStatus(t, r)
				if r.code != http.StatusServiceUnavailable || st.Reason != "ServiceUnavailable" {
					t.Errorf("%s %s: got %d %s, want 503 ServiceUnavailable", req.method, req.path, r.code, st.Reason)
				}
				if st.Details == nil || st.Details.RetryAfterSeconds != cloudRetryAfter {
					t.Errorf("%s %s: got details %+v, want retryAfterSeconds %d", req.method, req.path, st.Details, cloudRetryAfter)
				}
			}
			// Local reads keep working.
			if r := MustGet(t, srv.URL+"/api/v1/namespaces/default/pods/web-1"); r.code != http.StatusOK {
				t.Errorf("got local read %d, want 200", r.code)
			}
		})
	}
}

// A proxied watch reaches the client frame by frame, before the cloud ends
// its response.
func TestProxyStreams(t *testing.T) {
	release := make(chan struct{})
	cloud := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", response.MediaTypeJSON)
		_, _ = io.WriteString(w, `{"type":"ADDED","object":{}}`+"\n")
		w.(http.Flusher).Flush()
		<-release
	}))
	t.Cleanup(cloud.Close)
	t.Cleanup(func() { close(release) })
	srv := MustServer(t, Config{Cloud: &rest.Config{Host: cloud.URL}})
	wc := MustWatch(t, srv.URL+"/api/v1/secrets?watch=true")
	if got, want := wc.MustFrame(t), `{"type":"ADDED","object":{}}`; got != want {
		t.Errorf("got frame %s, want %s", got, want)
	}
}

// Protocol upgrades (exec, attach, port-forward) pass through the proxy.
func TestProxyUpgrades(t *testing.T) {
	cloud := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "test-proto" || r.Header.Get("Authorization") != "Bearer "+daemonToken {
			http.Error(w, "want an authenticated upgrade", http.StatusBadRequest)
			return
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test-proto\r\n\r\n")
		_ = rw.Flush()
		line, _ := rw.ReadString('\n')
		_, _ = rw.WriteString("echo " + line)
		_ = rw.Flush()
	}))
	t.Cleanup(cloud.Close)
	srv := MustServer(t, Config{Cloud: &rest.Config{Host: cloud.URL, BearerToken: daemonToken}})
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /api/v1/namespaces/default/pods/web-1/exec?command=sh HTTP/1.1\r\nHost: local\r\n"+
		"Connection: Upgrade\r\nUpgrade: test-proto\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read upgrade response: %v", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("got status %d, want 101", resp.StatusCode)
	}
	fmt.Fprintf(conn, "ping\n")
	line, err := br.ReadString('\n')
	if err != nil || line != "echo ping\n" {
		t.Errorf("got %q, %v, want \"echo ping\\n\"", line, err)
	}
}
