package door

import (
	"context"

	"k8s.io/apiserver/pkg/authentication/serviceaccount"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
)

// Pod is the pod a caller's service-account token is bound to, as the
// cloud's TokenReview named it.
type Pod struct {
	Namespace      string `json:"namespace"`
	Name           string `json:"name"`
	UID            string `json:"uid"`
	ServiceAccount string `json:"serviceAccount"`
}

// Holdings are the resources this node holds for its pods' own
// identities (the node's DaemonSets: kube-proxy, DNS, the CNI agent).
type Holdings interface {
	// ForPods reports whether a reads a resource held only for pods: the
	// node's own identity is then authorized per request like any other
	// caller, since the node's view does not include it.
	ForPods(a requestinfo.Attributes) bool
	// Authorized is told that pod's service account was authorized for
	// a. It may start holding a's resource; if it does, it returns once
	// the first list is held or a short wait is over, so the request is
	// answered from the holding when it can be.
	Authorized(ctx context.Context, pod Pod, a requestinfo.Attributes)
}

// podOf returns the pod u's token is bound to, from the TokenReview's
// extras; false for any other caller.
func podOf(u User) (Pod, bool) {
	ns, sa, err := serviceaccount.SplitUsername(u.Name)
	if err != nil {
		return Pod{}, false
	}
	name, uid := u.Extra[serviceaccount.PodNameKey], u.Extra[serviceaccount.PodUIDKey]
	if len(name) != 1 || len(uid) != 1 || name[0] == "" || uid[0] == "" {
		return Pod{}, false
	}
	return Pod{Namespace: ns, Name: name[0], UID: uid[0], ServiceAccount: sa}, true
}

// noteAuthorized tells cfg's holdings of a pod's authorized read.
func noteAuthorized(ctx context.Context, cfg SecureConfig, c requester, a requestinfo.Attributes) {
	if cfg.Holdings == nil || c.node || !a.ResourceRequest {
		return
	}
	if pod, ok := podOf(c.user); ok {
		cfg.Holdings.Authorized(ctx, pod, a)
		// The read may have started a holding: its decision, taken before,
		// may be kept for offline use now.
		if cfg.Authorizer != nil {
			cfg.Authorizer.retain(ctx, c.user, a)
		}
	}
}

// nodeView reports whether the node's own identity gets the node's view
// of a without asking the authorizer.
func nodeView(cfg SecureConfig, a requestinfo.Attributes) bool {
	return !cfg.ClusterScope && (cfg.Holdings == nil || !cfg.Holdings.ForPods(a))
}
