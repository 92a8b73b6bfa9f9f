package discovery

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
)

// writeAggregated answers /api (core) or /apis (named groups) with an
// APIGroupDiscoveryList of the configured resources, with kube-apiserver's
// ETag, Vary and Cache-Control headers and its 304 on a matching
// If-None-Match, which client-go's disk cache relies on.
func (s *Server) writeAggregated(w http.ResponseWriter, r *http.Request, core bool) {
	list := s.aggregatedList(core)
	body, err := json.Marshal(list)
	if err != nil {
		response.WriteError(w, err)
		return
	}
	etag := strconv.Quote(fmt.Sprintf("%X", sha512.Sum512(body)))
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Vary", "Accept")
	h.Set("Cache-Control", "public")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body = append(body, '\n')
	h.Set("Content-Type", response.ContentTypeAggregated)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// aggregatedList is the discovery document of the core group (core) or of
// the named groups, the latter by name with versions in priority order.
func (s *Server) aggregatedList(core bool) *apidiscoveryv2.APIGroupDiscoveryList {
	list := &apidiscoveryv2.APIGroupDiscoveryList{
		TypeMeta: metav1.TypeMeta{Kind: response.AggregatedKind, APIVersion: response.AggregatedGroup + "/" + response.AggregatedVersion},
		Items:    []apidiscoveryv2.APIGroupDiscovery{},
	}
	if core {
		list.Items = append(list.Items, apidiscoveryv2.APIGroupDiscovery{
			Versions: []apidiscoveryv2.APIVersionDiscovery{s.versionDiscovery(CoreGroupVersion)},
		})
		return list
	}
	for _, g := range s.groups() {
		item := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.Name}}
		for _, v := range g.Versions {
			gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
			item.Versions = append(item.Versions, s.versionDiscovery(gv))
		}
		list.Items = append(list.Items, item)
	}
	return list
}

// versionDiscovery lists gv's resources the way kube-apiserver's
// ConvertGroupVersionIntoToDiscovery does, sorted by name as kube installs
// them. A locally served version is always Current: its resources are
// known, even while the cloud is unreachable.
func (s *Server) versionDiscovery(gv schema.GroupVersion) apidiscoveryv2.APIVersionDiscovery {
	infos := s.resourceList(gv).APIResources
	resources := make([]apidiscoveryv2.APIResourceDiscovery, 0, len(infos))
	for _, info := range infos {
		if strings.Contains(info.Name, "/") {
			continue // subresources are not configured locally
		}
		resources = append(resources, resourceDiscovery(gv, info))
	}
	slices.SortFunc(resources, func(a, b apidiscoveryv2.APIResourceDiscovery) int {
		return strings.Compare(a.Resource, b.Resource)
	})
	return apidiscoveryv2.APIVersionDiscovery{
		Version:   gv.Version,
		Resources: resources,
		Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
	}
}

// resourceDiscovery converts one resource's discovery info. Like kube, the
// response kind carries a group and version only where they differ from
// the resource's own, which resourceList has already cleared.
func resourceDiscovery(gv schema.GroupVersion, info metav1.APIResource) apidiscoveryv2.APIResourceDiscovery {
	scope := apidiscoveryv2.ScopeCluster
	if info.Namespaced {
		scope = apidiscoveryv2.ScopeNamespace
	}
	return apidiscoveryv2.APIResourceDiscovery{
		Resource:         info.Name,
		SingularResource: info.SingularName,
		Scope:            scope,
		ResponseKind:     &metav1.GroupVersionKind{Group: info.Group, Version: info.Version, Kind: info.Kind},
		Verbs:            info.Verbs,
		ShortNames:       info.ShortNames,
		Categories:       info.Categories,
	}
}
