package discovery

import (
	"log/slog"
	"net/http/httputil"

	"github.com/gorilla/mux"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// CoreGroupVersion is the legacy API group served under /api.
var CoreGroupVersion = schema.GroupVersion{Version: "v1"}

// Config is what discovery is built from.
type Config struct {
	Caches    []*versioncache.Cache  // configured resources, in order; no nil entries
	Version   VersionSource          // nil: the version is never known locally
	Cloud     *httputil.ReverseProxy // nil: no cloud
	Connected func() bool            // cloud-link state; never nil
	Log       *slog.Logger           // never nil
}

// Server serves the discovery endpoints. Its fields are set by New and
// never changed, so handlers read them without locking.
type Server struct {
	caches    []*versioncache.Cache
	version   VersionSource
	cloud     *httputil.ReverseProxy
	connected func() bool
	log       *slog.Logger
}

// New returns the discovery endpoints of cfg.
func New(cfg Config) *Server {
	return &Server{caches: cfg.Caches, version: cfg.Version, cloud: cfg.Cloud, connected: cfg.Connected, log: cfg.Log}
}

// Register adds the discovery routes to r, a router of reads.
func (s *Server) Register(r *mux.Router) {
	r.Path("/version").Handler(s.discovery(s.localVersion))
	r.Path("/api").Handler(s.discovery(s.localAPIVersions))
	r.Path("/api/v1").Handler(s.discovery(s.localCoreResources))
	r.Path("/apis").Handler(s.discovery(s.localGroupList))
	r.Path("/apis/{group}").Handler(s.discovery(s.localGroup))
	r.Path("/apis/{group}/{version}").Handler(s.discovery(s.localGroupResources))
}
