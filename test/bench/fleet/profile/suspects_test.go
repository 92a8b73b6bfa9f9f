//go:build e2e

package profile

import (
	"testing"
	"time"
)

// TestParseSuspects reads the suspects' times from pprof's -top -cum.
func TestParseSuspects(t *testing.T) {
	out := `File: kube-apiserver
Duration: 360.06s, Total samples = 6.96s ( 1.93%)
      flat  flat%   sum%        cum   cum%
     0.10s  1.44%  2.30%      1.46s 20.98%  runtime.findRunnable
         0     0% 34.34%      0.34s  4.89%  golang.org/x/net/http2.(*serverConn).writeFrameAsync
     0.01s  0.14% 37.07%      0.22s  3.16%  golang.org/x/net/http2.(*serverConn).serve
         0     0% 38.22%     160ms  2.30%  golang.org/x/net/http2.(*serverConn).readFrames
         0     0% 53.74%      0.06s  0.86%  golang.org/x/net/http2.(*serverConn).processPing
         0     0% 53.74%      0.06s  0.86%  golang.org/x/net/http2.(*serverConn).processPingAck
         0     0% 54.00%      0.10s  1.44%  k8s.io/apiserver/pkg/endpoints/handlers.(*WatchServer).HandleHTTP
         0     0% 54.10%      0.05s  0.72%  k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).process
         0     0% 54.20%      0.05s  0.72%  k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval
`
	got, err := parseSuspects([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{60 * time.Millisecond, 720 * time.Millisecond, 0, 0, 0, 150 * time.Millisecond}
	if got.Total != 6960*time.Millisecond {
		t.Errorf("total: got %v, want 6.96s", got.Total)
	}
	for i, w := range want {
		if got.Cum[i] != w {
			t.Errorf("%s: got %v, want %v", suspects[i].name, got.Cum[i], w)
		}
	}
	if _, err := parseSuspects([]byte("no profile")); err == nil {
		t.Error("parseSuspects without a total: got no error, want one")
	}
}

// FuzzParseSuspects: the parser of pprof's summary never panics.
func FuzzParseSuspects(f *testing.F) {
	f.Add([]byte("Total samples = \n   0 0% 0% 1s 1% golang.org/x/net/http2.(*serverConn).serve\n"))
	f.Fuzz(func(_ *testing.T, data []byte) {
		_, _ = parseSuspects(data)
	})
}
