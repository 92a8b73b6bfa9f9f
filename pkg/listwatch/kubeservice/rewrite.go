package kubeservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// The Service the kubelet derives KUBERNETES_SERVICE_* from, and its port.
const (
	serviceNamespace = "default"
	serviceName      = "kubernetes"
	httpsPortName    = "https"
)

// servicesGVR is the resource the rewrite applies to.
var servicesGVR = schema.GroupVersionResource{Version: "v1", Resource: "services"}

// errNoPorts fails the rewrite of a Service without ports.
var errNoPorts = errors.New("the service has no ports")

// Rewriter shows the node default/kubernetes at the door's address.
type Rewriter struct {
	door netip.AddrPort // immutable
	log  *slog.Logger   // immutable

	mu sync.Mutex
	// src is the last cached object rewritten and out its rewrite, so the
	// rewrite and its encodings are made once per version. Guarded by mu.
	src, out *versioncache.Object
}

// New returns a Rewriter pointing default/kubernetes at door, which must
// be a specific address (not 0.0.0.0 or ::).
func New(door netip.AddrPort, log *slog.Logger) (*Rewriter, error) {
	if !door.IsValid() || door.Addr().IsUnspecified() || door.Port() == 0 {
		return nil, fmt.Errorf("rewrite kubernetes service: door address %s is not a specific address and port", door)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Rewriter{door: door, log: log}, nil
}

// For returns the object view of a request: the rewrite for the node's own
// reads of services, nil (objects as cached) for anything else.
func (rw *Rewriter) For(ctx context.Context, gvr schema.GroupVersionResource) func(*versioncache.Object) *versioncache.Object {
	if gvr != servicesGVR || !isNode(ctx) {
		return nil
	}
	return rw.Object
}

// isNode reports whether the request is the node's own (its identity on
// an authenticated door, or the insecure door).
func isNode(ctx context.Context) bool {
	rt, err := caller.ForwardTransport(ctx)
	return rt == nil && err == nil
}

// Object returns o rewritten when it is default/kubernetes, else o. An
// object that cannot be rewritten is shown as cached, with a warning.
func (rw *Rewriter) Object(o *versioncache.Object) *versioncache.Object {
	if o == nil || o.Namespace != serviceNamespace || o.Name != serviceName {
		return o
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.src == o {
		return rw.out
	}
	out, err := rw.rewrite(o)
	if err != nil {
		rw.log.Warn("kubernetes service shown unchanged to the node: cannot point it at the door", "err", err)
		out = o
	}
	rw.src, rw.out = o, out
	return out
}

// rewrite sets the door's address as spec.clusterIP, spec.clusterIPs and
// spec.ipFamilies, and its port as the https port's port (the first
// port's when none is named https). resourceVersion and everything else
// stay the cloud's.
func (rw *Rewriter) rewrite(o *versioncache.Object) (*versioncache.Object, error) {
	var m map[string]any
	if err := utiljson.Unmarshal(o.Raw, &m); err != nil {
		return nil, fmt.Errorf("decode %s/%s: %w", o.Namespace, o.Name, err)
	}
	spec, _ := m["spec"].(map[string]any)
	if spec == nil {
		return nil, fmt.Errorf("%s/%s has no spec", o.Namespace, o.Name)
	}
	ports, _ := spec["ports"].([]any)
	port := httpsPort(ports)
	if port == nil {
		return nil, errNoPorts
	}
	addr := rw.door.Addr().Unmap()
	family := "IPv4"
	if addr.Is6() {
		family = "IPv6"
	}
	spec["clusterIP"] = addr.String()
	spec["clusterIPs"] = []any{addr.String()}
	spec["ipFamilies"] = []any{family}
	port["port"] = int64(rw.door.Port())
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode %s/%s: %w", o.Namespace, o.Name, err)
	}
	return versioncache.NewObject(raw)
}

// httpsPort is the port named https, else the first one; nil without ports.
func httpsPort(ports []any) map[string]any {
	var first map[string]any
	for _, p := range ports {
		pm, _ := p.(map[string]any)
		if pm == nil {
			continue
		}
		if first == nil {
			first = pm
		}
		if pm["name"] == httpsPortName {
			return pm
		}
	}
	return first
}
