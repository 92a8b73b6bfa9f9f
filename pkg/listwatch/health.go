package listwatch

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// serveLive answers /healthz and /livez: the process serves requests.
func (s *server) serveLive(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/")
	if _, verbose := r.URL.Query()["verbose"]; verbose {
		writeText(w, http.StatusOK, fmt.Sprintf("[+]ping ok\n%s check passed\n", name))
		return
	}
	writeText(w, http.StatusOK, "ok")
}

// serveReady answers /readyz: ready when every resource cache is ready,
// whether or not the cloud is reachable. ?verbose lists one check per
// resource and the cloud link, which is informational only.
func (s *server) serveReady(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	ready := true
	for _, c := range s.caches {
		gvr := c.GVR()
		name := gvr.GroupResource().String()
		if s.onRequest[c] {
			s.writeOnRequest(&b, c, name)
			continue
		}
		if c.Ready() {
			fmt.Fprintf(&b, "[+]cache:%s ok\n", name)
			continue
		}
		ready = false
		fmt.Fprintf(&b, "[-]cache:%s failed: not ready\n", name)
	}
	link := "disconnected"
	if s.connected() {
		link = "connected"
	}
	fmt.Fprintf(&b, "cloud-link: %s (informational, does not affect readiness)\n", link)
	code, verdict := http.StatusOK, "readyz check passed\n"
	if !ready {
		code, verdict = http.StatusInternalServerError, "readyz check failed\n"
	}
	if _, verbose := r.URL.Query()["verbose"]; verbose || !ready {
		writeText(w, code, b.String()+verdict)
		return
	}
	writeText(w, code, "ok")
}

// writeOnRequest describes a resource held on request, which never fails
// readiness: who it is held for, or that it is not held.
func (s *server) writeOnRequest(b *strings.Builder, c *versioncache.Cache, name string) {
	holders := s.heldFor(c.GVR())
	switch {
	case !c.Ready() && len(holders) == 0:
		fmt.Fprintf(b, "[+]cache:%s not held (read through the cloud)\n", name)
	case !c.Ready():
		fmt.Fprintf(b, "[+]cache:%s starting for %s (read through the cloud)\n", name, strings.Join(holders, ", "))
	default:
		fmt.Fprintf(b, "[+]cache:%s held for %s\n", name, strings.Join(holders, ", "))
	}
}

// writeText writes a plain-text health answer.
func writeText(w http.ResponseWriter, code int, body string) {
	h := w.Header()
	h.Set("Content-Type", response.ContentTypeText)
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body))
}
