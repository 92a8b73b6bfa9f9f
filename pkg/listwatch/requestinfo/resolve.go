package requestinfo

import (
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// Attributes are what a request asks, as kube-apiserver's RequestInfo
// resolves them; their JSON is a SubjectAccessReview's attributes.
type Attributes struct {
	ResourceRequest bool   `json:"resourceRequest"`
	Path            string `json:"path,omitempty"`
	Verb            string `json:"verb"`
	Group           string `json:"group,omitempty"`
	Version         string `json:"version,omitempty"`
	Resource        string `json:"resource,omitempty"`
	Subresource     string `json:"subresource,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name,omitempty"`
	FieldSelector   string `json:"fieldSelector,omitempty"`
	LabelSelector   string `json:"labelSelector,omitempty"`
}

// factory is kube-apiserver's own resolver with its API prefixes: the
// watch parameter is decoded with the parameter codec the handlers use, so
// ?watch=yes, =t or =on are a watch here as they are when served.
var factory = &apirequest.RequestInfoFactory{
	APIPrefixes:          sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api"),
}

// Resolve resolves r with k8s.io/apiserver's RequestInfoFactory for the
// /api and /apis prefixes.
func Resolve(r *http.Request) Attributes {
	info, err := factory.NewRequestInfo(r)
	if err != nil { // only for a malformed URL; no verb authorizes it
		return Attributes{Path: r.URL.Path}
	}
	return fromInfo(info)
}

func fromInfo(info *apirequest.RequestInfo) Attributes {
	if !info.IsResourceRequest {
		return Attributes{Path: info.Path, Verb: info.Verb}
	}
	return Attributes{ResourceRequest: true, Verb: info.Verb, Group: info.APIGroup, Version: info.APIVersion,
		Resource: info.Resource, Subresource: info.Subresource, Namespace: info.Namespace, Name: info.Name,
		FieldSelector: info.FieldSelector, LabelSelector: info.LabelSelector}
}

// longRunningVerbs and longRunningSubresources are kube-apiserver's
// (BasicLongRunningRequestCheck as its server options configure it):
// requests that hold their connection for as long as the client wants.
var (
	longRunningVerbs        = sets.New("watch", "proxy")
	longRunningSubresources = sets.New("attach", "exec", "proxy", "log", "portforward")
)

// LongRunning reports whether a is a long-running request as kube-apiserver
// classifies it: a watch, a proxy, a pod's log, exec, attach or
// portforward, or a profile. Such requests are exempt from the in-flight
// cap and counted against the watch cap instead.
func LongRunning(a Attributes) bool {
	if longRunningVerbs.Has(a.Verb) {
		return true
	}
	if a.ResourceRequest {
		return longRunningSubresources.Has(a.Subresource)
	}
	return strings.HasPrefix(a.Path, "/debug/pprof/")
}
