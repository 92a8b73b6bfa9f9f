package discovery

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/gorilla/mux"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/negotiate"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
)

// readVerbs are the verbs a resource without discovery verbs is given: the
// ones served locally.
var readVerbs = metav1.Verbs{"get", "list", "watch"}

// discovery serves a discovery endpoint from the cloud while the cloud link
// is up, so clients see every cloud resource (all of which the proxy
// reaches), and from the configured caches otherwise or when the cloud
// request fails.
func (s *Server) discovery(local http.HandlerFunc) http.Handler {
	if s.cloud == nil {
		return local
	}
	proxy := *s.cloud
	proxy.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		if r.Context().Err() != nil {
			return // the client went away
		}
		s.log.Debug("cloud discovery failed, serving local", "path", r.URL.Path, "error", err)
		local(w, r)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.connected() {
			proxy.ServeHTTP(w, r)
			return
		}
		local(w, r)
	})
}

// localAPIVersions serves /api: the core group's aggregated discovery
// when asked for, else APIVersions.
func (s *Server) localAPIVersions(w http.ResponseWriter, r *http.Request) {
	if negotiate.AggregatedDiscovery(r) {
		s.writeAggregated(w, r, true)
		return
	}
	writeObject(w, r, &metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: []string{CoreGroupVersion.Version},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host},
		},
	})
}

// localGroupList serves /apis: the named groups' aggregated discovery
// when asked for, else APIGroupList.
func (s *Server) localGroupList(w http.ResponseWriter, r *http.Request) {
	if negotiate.AggregatedDiscovery(r) {
		s.writeAggregated(w, r, false)
		return
	}
	writeObject(w, r, &metav1.APIGroupList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
		Groups:   s.groups(),
	})
}

// localGroup serves /apis/{group}.
func (s *Server) localGroup(w http.ResponseWriter, r *http.Request) {
	name := mux.Vars(r)["group"]
	for _, g := range s.groups() {
		if g.Name == name {
			g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
			writeObject(w, r, &g)
			return
		}
	}
	response.WriteError(w, response.PathNotFound())
}

// localCoreResources serves /api/v1, which exists even with no core
// resource configured.
func (s *Server) localCoreResources(w http.ResponseWriter, r *http.Request) {
	writeObject(w, r, s.resourceList(CoreGroupVersion))
}

// localGroupResources serves /apis/{group}/{version}.
func (s *Server) localGroupResources(w http.ResponseWriter, r *http.Request) {
	vars := mux.Vars(r)
	list := s.resourceList(schema.GroupVersion{Group: vars["group"], Version: vars["version"]})
	if len(list.APIResources) == 0 {
		response.WriteError(w, response.PathNotFound())
		return
	}
	writeObject(w, r, list)
}

// groups returns the configured API groups other than core, by name, with
// their versions in kube's priority order (the preferred one first).
func (s *Server) groups() []metav1.APIGroup {
	groups := []metav1.APIGroup{}
	for _, c := range s.caches {
		gv := c.GVR().GroupVersion()
		if gv.Group == "" {
			continue
		}
		i := slices.IndexFunc(groups, func(g metav1.APIGroup) bool { return g.Name == gv.Group })
		if i < 0 {
			groups = append(groups, metav1.APIGroup{Name: gv.Group})
			i = len(groups) - 1
		}
		v := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
		if !slices.Contains(groups[i].Versions, v) {
			groups[i].Versions = append(groups[i].Versions, v)
		}
	}
	for i := range groups {
		slices.SortFunc(groups[i].Versions, func(a, b metav1.GroupVersionForDiscovery) int {
			return version.CompareKubeAwareVersionStrings(b.Version, a.Version)
		})
		groups[i].PreferredVersion = groups[i].Versions[0]
	}
	slices.SortFunc(groups, func(a, b metav1.APIGroup) int { return strings.Compare(a.Name, b.Name) })
	return groups
}

// resourceList lists the configured resources of gv whose discovery info
// is known.
func (s *Server) resourceList(gv schema.GroupVersion) *metav1.APIResourceList {
	list := &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gv.String(),
		APIResources: []metav1.APIResource{},
	}
	for _, c := range s.caches {
		gvr := c.GVR()
		info, ok := c.Info()
		if gvr.GroupVersion() != gv || !ok {
			continue
		}
		if info.Name == "" {
			info.Name = gvr.Resource
		}
		if len(info.Verbs) == 0 {
			info.Verbs = readVerbs
		}
		if info.Group == gv.Group && info.Version == gv.Version {
			// kube names a resource's group and version only where they
			// differ from the list's; the sync loop records them always.
			info.Group, info.Version = "", ""
		}
		list.APIResources = append(list.APIResources, info)
	}
	return list
}

// writeObject writes a discovery object as JSON after checking Accept.
func writeObject(w http.ResponseWriter, r *http.Request, obj any) {
	if err := negotiate.JSONOnly(r); err != nil {
		response.WriteError(w, err)
		return
	}
	b, err := json.Marshal(obj)
	if err != nil {
		response.WriteError(w, err)
		return
	}
	response.WriteJSON(w, b, []byte{'\n'})
}
