package listwatch

import (
	"net/http"
	"testing"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// staticVersion is a VersionSource that knows info when known is set.
type staticVersion struct {
	info  version.Info
	known bool
}

func (v staticVersion) Version() (version.Info, bool) { return v.info, v.known }

var cloudVersion = version.Info{Major: "1", Minor: "36", GitVersion: "v1.36.3", GitCommit: "abc",
	GitTreeState: "clean", BuildDate: "2026-10-01T00:00:00Z", GoVersion: "go1.26.8", Compiler: "gc", Platform: "linux/amd64"}

const cloudVersionJSON = `{
  "major": "1",
  "minor": "36",
  "gitVersion": "v1.36.3",
  "gitCommit": "abc",
  "gitTreeState": "clean",
  "buildDate": "2026-10-01T00:00:00Z",
  "goVersion": "go1.26.8",
  "compiler": "gc",
  "platform": "linux/amd64"
}`

func TestVersion(t *testing.T) {
	cloud := newFakeCloud(t)
	tests := []struct {
		name      string
		cloud     *rest.Config
		connected bool
		source    VersionSource
		wantCode  int
		wantBody  string
	}{
		{"offline, known", nil, false, staticVersion{cloudVersion, true}, http.StatusOK, cloudVersionJSON},
		{"offline, unknown", nil, false, staticVersion{}, http.StatusServiceUnavailable, ""},
		{"offline, no source", nil, false, nil, http.StatusServiceUnavailable, ""},
		{"connected", cloud.config(), true, staticVersion{cloudVersion, true}, http.StatusCreated, cloudAnswer},
		{"connected but the cloud fails", downCloud(t), true, staticVersion{cloudVersion, true}, http.StatusOK, cloudVersionJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := MustServer(t, Config{Cloud: tt.cloud, CloudConnected: func() bool { return tt.connected }, Version: tt.source})
			r := MustGet(t, srv.URL+"/version")
			if r.code != tt.wantCode {
				t.Fatalf("got %d %s, want %d", r.code, r.body, tt.wantCode)
			}
			if tt.wantCode == http.StatusServiceUnavailable {
				MustStatus(t, r)
				return
			}
			if r.body != tt.wantBody {
				t.Errorf("got body %s, want %s", r.body, tt.wantBody)
			}
		})
	}
}

// client-go's ServerVersion reads the cached version while the cloud is down.
func TestClientGoServerVersionOffline(t *testing.T) {
	srv := MustServer(t, Config{Cloud: downCloud(t), CloudConnected: func() bool { return true },
		Version: staticVersion{cloudVersion, true}})
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatalf("discovery client: %v", err)
	}
	got, err := dc.ServerVersion()
	if err != nil || *got != cloudVersion {
		t.Errorf("ServerVersion() = %+v, %v; want %+v", got, err, cloudVersion)
	}
}
