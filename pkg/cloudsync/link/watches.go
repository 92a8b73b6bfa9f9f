package link

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// watchCounter counts, in open, the cloud watches that are open: answered
// 200 and their body not yet closed. client-go closes a watch's body when
// the watch stops, whether the cloud ended the stream or the caller did.
type watchCounter struct {
	next http.RoundTripper
	open *atomic.Int64
}

var _ utilnet.RoundTripperWrapper = (*watchCounter)(nil)

// WrappedRoundTripper implements utilnet.RoundTripperWrapper.
func (w *watchCounter) WrappedRoundTripper() http.RoundTripper { return w.next }

// RoundTrip implements http.RoundTripper.
func (w *watchCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK || !isWatch(req.URL) {
		return resp, err
	}
	w.open.Add(1)
	resp.Body = &watchBody{ReadCloser: resp.Body, open: w.open}
	return resp, nil
}

// isWatch says whether u asks for a watch, as kube-apiserver reads its
// watch parameter (a boolean; a watch path is not sent by client-go).
func isWatch(u *url.URL) bool {
	if !strings.Contains(u.RawQuery, "watch=") {
		return false
	}
	b, _ := strconv.ParseBool(u.Query().Get("watch"))
	return b
}

// watchBody is an open watch's body; its first Close counts the watch
// closed.
type watchBody struct {
	io.ReadCloser
	open *atomic.Int64
	once sync.Once
}

// Close implements io.Closer.
func (b *watchBody) Close() error {
	b.once.Do(func() { b.open.Add(-1) })
	return b.ReadCloser.Close()
}
