package offline

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

const (
	// nodesGroup is the group of every node identity.
	nodesGroup = "system:nodes"
	// nodeUserPrefix prefixes a node's user name.
	nodeUserPrefix = "system:node:"
)

// WithStoredAnswers answers the kubelet's TokenRequests, and in node
// scope its GETs of kinds a node may get but not list, from the store
// while the cloud is unreachable. Tokens go to tokens, bound to pods held
// in caches; get-only answers go to answers. Only the node's own requests
// are stored or replayed.
func WithStoredAnswers(h http.Handler, res []cloudsync.Resource, answers Store, tokens Store,
	caches []*versioncache.Cache, node string, link *link.Link, log *slog.Logger) http.Handler {
	for _, r := range res {
		if r.OnDemand { // node scope: get-only kinds are not synced
			h = WrapGetOnly(h, GetOnlyConfig{Store: answers, Connected: link.Connected, FromNode: FromNode(node), Logger: log})
			break
		}
	}
	return WrapTokenRequests(h, TokenRequestConfig{Store: tokens, Connected: link.Connected, Logger: log,
		FromNode: FromNode(node), HeldPod: holding.HeldPod(caches)})
}

// TokenForgetter removes the stored tokens of pods deleted from the
// node's pods cache; nil if pods are not synced.
func TokenForgetter(res []cloudsync.Resource, caches []*versioncache.Cache, tokens PrefixDeleter, log *slog.Logger) func(context.Context) error {
	for i, r := range res {
		if r.GVR == holding.PodsGVR {
			return func(ctx context.Context) error { return ForgetDeletedPods(ctx, caches[i], tokens, log) }
		}
	}
	return nil
}

// FromNode reports whether a request carries this node's own identity:
// no authenticated user (the node's loopback door) or the node's user.
func FromNode(node string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		u, ok := caller.UserFrom(r.Context())
		return !ok || u.Name == "" || (u.Name == nodeUserPrefix+node && slices.Contains(u.Groups, nodesGroup))
	}
}

// HeldResources reports whether the daemon holds a request's resource (it
// syncs it, holds its referenced objects, or holds it for pods), so that
// it can answer reads of it from its own state: the resources whose
// decisions may be stored. The discovery it serves offline counts too, a
// bounded set of paths (the API roots, /version, and each group and
// group-version of a held resource), so that a pod's client, which reads
// discovery before anything else, still starts offline.
func HeldResources(res []cloudsync.Resource) func(a requestinfo.Attributes) bool {
	held := make(map[schema.GroupVersionResource]bool, len(res))
	discovery := map[string]bool{"/api": true, "/apis": true, "/version": true}
	for _, r := range res {
		held[r.GVR] = true
		if r.GVR.Group == "" {
			discovery["/api/"+r.GVR.Version] = true
			continue
		}
		discovery["/apis/"+r.GVR.Group] = true
		discovery["/apis/"+r.GVR.Group+"/"+r.GVR.Version] = true
	}
	return func(a requestinfo.Attributes) bool {
		if !a.ResourceRequest {
			return a.Verb == "get" && discovery[strings.TrimSuffix(a.Path, "/")]
		}
		return held[schema.GroupVersionResource{Group: a.Group, Version: a.Version, Resource: a.Resource}]
	}
}
