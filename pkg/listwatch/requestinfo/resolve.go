package requestinfo

import (
	"net/http"
	"strings"
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

// Resolve resolves r the way k8s.io/apiserver's RequestInfoFactory does
// for the /api and /apis prefixes.
func Resolve(r *http.Request) Attributes {
	path := r.URL.Path
	a := Attributes{Path: path, Verb: nonResourceVerb(r.Method)}
	parts := splitPath(path)
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		a.Version, parts = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		a.Group, a.Version, parts = parts[1], parts[2], parts[3:]
	default:
		return a
	}
	a.ResourceRequest = true
	a.Path = ""
	a.Verb = resourceVerb(r.Method)
	if parts[0] == "watch" {
		a.Verb, parts = "watch", parts[1:]
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		a.Namespace = parts[1]
		if len(parts) >= 3 {
			parts = parts[2:]
		} else {
			a.Resource, a.Name = "namespaces", parts[1]
			parts = nil
		}
	}
	if len(parts) > 0 {
		a.Resource = parts[0]
	}
	if len(parts) > 1 {
		a.Name = parts[1]
	}
	if len(parts) > 2 {
		a.Subresource = parts[2]
	}
	a.refineCollection(r)
	return a
}

// refineCollection turns get into list/watch and delete into
// deletecollection for a request without a name, and keeps selectors.
func (a *Attributes) refineCollection(r *http.Request) {
	q := r.URL.Query()
	if a.Verb == "get" && a.Name == "" {
		a.Verb = "list"
	}
	if a.Verb == "list" {
		if w := strings.ToLower(q.Get("watch")); w == "true" || w == "1" {
			a.Verb = "watch"
		}
	}
	if a.Verb == "delete" && a.Name == "" {
		a.Verb = "deletecollection"
	}
	if a.Verb == "list" || a.Verb == "watch" || a.Verb == "deletecollection" {
		a.FieldSelector = q.Get("fieldSelector")
		a.LabelSelector = q.Get("labelSelector")
	}
	if a.Name == "" && (a.Verb == "list" || a.Verb == "watch") {
		a.Name = nameFromFieldSelector(a.FieldSelector)
	}
}

// nameFromFieldSelector is X of a field selector metadata.name=X, which
// kube-apiserver treats as the request's name (a single-object watch).
func nameFromFieldSelector(sel string) string {
	if strings.Contains(sel, ",") {
		return ""
	}
	for _, prefix := range []string{"metadata.name==", "metadata.name="} {
		if v, ok := strings.CutPrefix(sel, prefix); ok && v != "" && !strings.ContainsAny(v, "=!") {
			return v
		}
	}
	return ""
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// resourceVerb is the verb of a resource request before refineCollection,
// as RequestInfoFactory maps it: empty for a method it does not know, which
// no authorization rule grants.
func resourceVerb(method string) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodGet, http.MethodHead:
		return "get"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	default:
		return ""
	}
}

// nonResourceVerb is the verb of a request outside /api and /apis: the
// lowercase method, as RequestInfoFactory has it.
func nonResourceVerb(method string) string { return strings.ToLower(method) }
