package listwatch

import (
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

func TestHealth(t *testing.T) {
	f := newFixture(t)
	notReady := versioncache.New(leasesGVR, 0)
	t.Cleanup(notReady.Close)
	ready := MustServer(t, Config{Caches: []*versioncache.Cache{f.pods, f.leases}, Cloud: downCloud(t)})
	unready := MustServer(t, Config{Caches: []*versioncache.Cache{f.pods, notReady}, CloudConnected: func() bool { return true }})
	tests := []struct {
		name     string
		srv      string
		path     string
		wantCode int
		wantBody string
	}{
		{"healthz", ready.URL, "/healthz", 200, "ok"},
		{"livez", unready.URL, "/livez", 200, "ok"},
		{"livez verbose", ready.URL, "/livez?verbose", 200, "[+]ping ok\nlivez check passed\n"},
		{"readyz with the cloud down", ready.URL, "/readyz", 200, "ok"},
		{"readyz verbose", ready.URL, "/readyz?verbose", 200,
			"[+]cache:pods ok\n[+]cache:leases.coordination.k8s.io ok\n" +
				"cloud-link: disconnected (informational, does not affect readiness)\nreadyz check passed\n"},
		{"readyz with a cache not ready", unready.URL, "/readyz", 500,
			"[+]cache:pods ok\n[-]cache:leases.coordination.k8s.io failed: not ready\n" +
				"cloud-link: connected (informational, does not affect readiness)\nreadyz check failed\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := MustGet(t, tt.srv+tt.path)
			if r.code != tt.wantCode || r.body != tt.wantBody {
				t.Errorf("got %d %q, want %d %q", r.code, r.body, tt.wantCode, tt.wantBody)
			}
		})
	}
	if r := MustGet(t, ready.URL+"/readyz"); r.header.Get("Content-Type") != response.ContentTypeText {
		t.Errorf("got Content-Type %q, want %q", r.header.Get("Content-Type"), response.ContentTypeText)
	}
}
