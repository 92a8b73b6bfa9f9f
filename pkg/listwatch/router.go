package listwatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/discovery"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/proxy"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/scope"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// Config configures the local API.
type Config struct {
	Caches         []*versioncache.Cache // configured resources, at most one per GVR
	Cloud          *rest.Config          // the cloud kube-apiserver; nil means never reachable
	CloudConnected func() bool           // cloud-link state from the sync loop; nil means false
	Logger         *slog.Logger
	Clock          clock.WithDelayedExecution // k8s.io/utils/clock; nil means the real clock
	// Version answers /version while the cloud is unreachable; nil means
	// the version is never known locally.
	Version VersionSource
	// Scopes is the part of each resource the cloud sync holds; a
	// resource without an entry is held whole. Reads outside it go to the
	// cloud (see held.go).
	Scopes map[schema.GroupVersionResource]Scope
	// Widened are whole copies, held on request for the node's pods, of
	// resources that Caches hold in part (Scopes): callers other than the
	// node read them while they are held and Current (see widen.go). At
	// most one per GVR, each of a configured resource.
	Widened []*versioncache.Cache
	// NodeCaller reports whether a request is the node's own, which keeps
	// the node's partial view of a widened resource; nil lets the door's
	// marking decide (caller.ForwardTransport: the node, or no door).
	NodeCaller func(context.Context) bool
	// Current reports whether a resource held on request is kept current
	// by its sync; while it is not and the cloud is reachable, reads of
	// it go to the cloud, never to what is held. nil means always.
	Current func(schema.GroupVersionResource) bool
	// View rewrites objects for some callers (see view.go); nil shows
	// every caller the cached objects.
	View View
}

// Scope is the part of a resource the cloud sync lists and watches
// (scope.Held).
type Scope = scope.Held

// VersionSource knows the cloud's version, so /version can be answered
// while the cloud is unreachable.
type VersionSource = discovery.VersionSource

// coreGroupVersion is the legacy API group served under /api.
var coreGroupVersion = discovery.CoreGroupVersion

// Path prefixes of the resource APIs.
const (
	corePrefix  = "/api/v1/"
	groupPrefix = "/apis/"
)

// server holds the handler state. Every field is set by New and never
// changed afterwards, so handlers read them without locking.
type server struct {
	caches    []*versioncache.Cache // in configuration order; no nil entries
	resources map[schema.GroupVersionResource]*versioncache.Cache
	cloud     *httputil.ReverseProxy     // nil when no cloud is configured
	connected func() bool                // never nil
	log       *slog.Logger               // never nil
	clock     clock.WithDelayedExecution // never nil
	// written holds one read-your-writes floor per cache: the highest RV
	// a proxied write to that resource returned. The map is never changed
	// after New; the floors only grow.
	written map[*versioncache.Cache]*atomic.Uint64
	version discovery.VersionSource // nil when not configured
	// synced is the held part of each cache's resource; a cache without
	// an entry holds its whole resource.
	synced map[*versioncache.Cache]scope.Synced
	// onRequest marks the caches of resources held on request
	// (Scope.OnRequest).
	onRequest map[*versioncache.Cache]bool
	// widened is the whole copy of a partially synced resource, by GVR
	// (Config.Widened).
	widened map[schema.GroupVersionResource]*versioncache.Cache
	// nodeCaller is Config.NodeCaller; never nil.
	nodeCaller func(context.Context) bool
	// current is Config.Current; never nil.
	current func(schema.GroupVersionResource) bool
	// evictedGrace is evictedWriteGrace; tests shorten it.
	evictedGrace time.Duration
	// view rewrites objects for some callers; nil for none.
	view View
}

// New returns the handler of the local API.
func New(cfg Config) (http.Handler, error) {
	s, err := newServer(cfg)
	if err != nil {
		return nil, err
	}
	return s.recoverPanics(s.routes()), nil
}

// NewForNamespace returns the builder of one namespaced holding's local
// API (forpods.NodeConfig.API): its cache, held on request in its
// namespace, and everything else forwarded to cloud as the main API does.
// It serves resource requests only, so it needs no version source.
func NewForNamespace(cloud *rest.Config, connected func() bool, log *slog.Logger) func(*versioncache.Cache, string) (http.Handler, error) {
	return func(c *versioncache.Cache, ns string) (http.Handler, error) {
		return New(Config{Caches: []*versioncache.Cache{c}, Cloud: cloud, CloudConnected: connected, Logger: log,
			Scopes: map[schema.GroupVersionResource]Scope{c.GVR(): {Namespace: ns, OnRequest: true}}})
	}
}

// newServer builds the handler state from cfg.
func newServer(cfg Config) (*server, error) {
	s := &server{
		caches:     make([]*versioncache.Cache, 0, len(cfg.Caches)),
		resources:  make(map[schema.GroupVersionResource]*versioncache.Cache, len(cfg.Caches)),
		connected:  cfg.CloudConnected,
		log:        cfg.Logger,
		clock:      cfg.Clock,
		version:    cfg.Version,
		current:    cfg.Current,
		nodeCaller: cfg.NodeCaller,
		view:       cfg.View,

		evictedGrace: evictedWriteGrace,
	}
	if s.connected == nil {
		s.connected = func() bool { return false }
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.clock == nil {
		s.clock = clock.RealClock{}
	}
	if s.nodeCaller == nil {
		s.nodeCaller = actsAsNode
	}
	if s.current == nil {
		s.current = func(schema.GroupVersionResource) bool { return true }
	}
	for i, c := range cfg.Caches {
		if err := s.addCache(c); err != nil {
			return nil, fmt.Errorf("cache %d: %w", i, err)
		}
	}
	if err := s.addScopes(cfg.Scopes); err != nil {
		return nil, err
	}
	if err := s.addWidened(cfg.Widened); err != nil {
		return nil, err
	}
	s.written = newWrittenFloors(append(append([]*versioncache.Cache(nil), s.caches...), cfg.Widened...))
	if cfg.Cloud != nil {
		p, err := proxy.New(cfg.Cloud, proxy.Options{Log: s.log, Clock: s.clock, ModifyResponse: s.observeWrite})
		if err != nil {
			return nil, fmt.Errorf("cloud proxy: %w", err)
		}
		s.cloud = p
	}
	return s, nil
}

func (s *server) addCache(c *versioncache.Cache) error {
	if c == nil {
		return errors.New("nil cache")
	}
	gvr := c.GVR()
	if gvr.Resource == "" || gvr.Version == "" {
		return fmt.Errorf("incomplete resource %q", gvr.String())
	}
	if _, dup := s.resources[gvr]; dup {
		return fmt.Errorf("resource %q configured twice", gvr.String())
	}
	s.resources[gvr] = c
	s.caches = append(s.caches, c)
	return nil
}

// routes wires the endpoints. Reads of known paths are served locally;
// any other method or path reaches the cloud proxy.
func (s *server) routes() http.Handler {
	r := mux.NewRouter()
	// Proxied paths must reach the cloud byte for byte, so no redirects
	// to cleaned paths.
	r.SkipClean(true)
	read := r.Methods(http.MethodGet, http.MethodHead).Subrouter()
	discovery.New(discovery.Config{Caches: s.caches, Version: s.version, Cloud: s.cloud, Connected: s.connected,
		Log: s.log}).Register(read)
	read.PathPrefix(corePrefix).HandlerFunc(s.serveCore)
	read.PathPrefix(groupPrefix + "{group}/{version}/").HandlerFunc(s.serveGroup)
	proxy := http.HandlerFunc(s.serveProxy)
	r.NotFoundHandler = proxy
	r.MethodNotAllowedHandler = proxy
	read.NotFoundHandler = proxy
	read.MethodNotAllowedHandler = proxy
	return r
}

// serveCore serves /api/v1/... resource paths.
func (s *server) serveCore(w http.ResponseWriter, r *http.Request) {
	s.serveResource(w, r, coreGroupVersion, strings.TrimPrefix(r.URL.Path, corePrefix))
}

// serveGroup serves /apis/{group}/{version}/... resource paths.
func (s *server) serveGroup(w http.ResponseWriter, r *http.Request) {
	vars := mux.Vars(r)
	gv := schema.GroupVersion{Group: vars["group"], Version: vars["version"]}
	prefix := groupPrefix + gv.Group + "/" + gv.Version + "/"
	s.serveResource(w, r, gv, strings.TrimPrefix(r.URL.Path, prefix))
}

// serveResource serves a GET or HEAD of a resource path where decide
// routes it: from the cache, through the cloud, or refused.
func (s *server) serveResource(w http.ResponseWriter, r *http.Request, gv schema.GroupVersion, rest string) {
	rd := s.readOf(r, gv, rest)
	switch rt := decide(rd.facts); rt.to {
	case toCloud:
		s.serveProxy(w, r)
	case toRefuse:
		rd.refuse(w, rt)
	default:
		s.serveLocal(w, r, &rd, rt)
	}
}

// serveLocal answers a read decide routed to the cache.
func (s *server) serveLocal(w http.ResponseWriter, r *http.Request, rd *read, rt route) {
	t := rd.t
	t.view = s.viewFor(r.Context(), t.gvr)
	switch {
	case t.name != "":
		s.serveGet(w, r, t, rd.resp, rt)
		return
	case rt.why == reasonLimited:
		response.AddWarning(w, limitedWarning(t))
	}
	if rd.list.opts.Watch {
		s.serveWatch(w, r, t, rd.list, rd.resp)
		return
	}
	s.serveList(w, r, t, rd.list, rd.resp)
}
