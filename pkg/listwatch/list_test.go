package listwatch

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// listBody is a decoded list answer.
type listBody struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Metadata   struct {
		ResourceVersion    string `json:"resourceVersion"`
		Continue           string `json:"continue"`
		RemainingItemCount *int64 `json:"remainingItemCount"`
	} `json:"metadata"`
	Items []struct {
		Metadata struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"metadata"`
	} `json:"items"`
}

func MustList(t testing.TB, r reply) listBody {
	t.Helper()
	if r.code != http.StatusOK {
		t.Fatalf("got status %d body %s, want 200", r.code, r.body)
	}
	var l listBody
	if err := json.Unmarshal([]byte(r.body), &l); err != nil {
		t.Fatalf("decode list %q: %v", r.body, err)
	}
	return l
}

func (l listBody) names() []string {
	out := []string{}
	for _, it := range l.Items {
		out = append(out, strings.TrimPrefix(it.Metadata.Namespace+"/"+it.Metadata.Name, "/"))
	}
	return out
}

func TestListShape(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	r := MustGet(t, srv.URL+"/api/v1/namespaces/default/configmaps")
	// Like kube-apiserver's, the items of a built-in kind's list carry no
	// kind or apiVersion.
	want := `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"20"},"items":[` +
		`{"data":{"mode":"edge"},"metadata":{"name":"settings","namespace":"default","resourceVersion":"14","uid":"uid-settings"}}]}`
	if got := strings.TrimSuffix(r.body, "\n"); got != want {
		t.Errorf("got body %s, want %s", got, want)
	}
	tests := []struct {
		name, path, kind, apiVersion string
		want                         []string
	}{
		{"all namespaces", "/api/v1/pods", "PodList", "v1", []string{"default/web-1", "default/web-2", "kube-system/dns-1"}},
		{"one namespace", "/api/v1/namespaces/kube-system/pods", "PodList", "v1", []string{"kube-system/dns-1"}},
		{"missing namespace", "/api/v1/namespaces/nope/pods", "PodList", "v1", []string{}},
		{"cluster-scoped", "/api/v1/nodes", "NodeList", "v1", []string{"node-a", "node-b"}},
		{"group", "/apis/coordination.k8s.io/v1/leases", "LeaseList", "coordination.k8s.io/v1", []string{"kube-node-lease/node-a"}},
		{"limit with resourceVersion 0 is ignored", "/api/v1/pods?limit=1&resourceVersion=0", "PodList", "v1", []string{"default/web-1", "default/web-2", "kube-system/dns-1"}},
		{"reflector's first list", "/api/v1/pods?limit=500&resourceVersion=0", "PodList", "v1", []string{"default/web-1", "default/web-2", "kube-system/dns-1"}},
		{"older resourceVersion", "/api/v1/nodes?resourceVersion=10", "NodeList", "v1", []string{"node-a", "node-b"}},
		{"exact current resourceVersion", "/api/v1/nodes?resourceVersion=20&resourceVersionMatch=Exact", "NodeList", "v1", []string{"node-a", "node-b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := MustGet(t, srv.URL+tt.path)
			l := MustList(t, r)
			if l.Kind != tt.kind || l.APIVersion != tt.apiVersion || l.Metadata.ResourceVersion != "20" {
				t.Errorf("got kind %q apiVersion %q resourceVersion %q, want %q %q \"20\"",
					l.Kind, l.APIVersion, l.Metadata.ResourceVersion, tt.kind, tt.apiVersion)
			}
			if l.Metadata.Continue != "" {
				t.Errorf("got continue %q, want none", l.Metadata.Continue)
			}
			if got := l.names(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got items %v, want %v", got, tt.want)
			}
			if !strings.Contains(r.body, `"items":[`) {
				t.Errorf("got body %s, want an items array", r.body)
			}
		})
	}
}

func TestListSelectors(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	tests := []struct {
		name, resource, label, field string
		want                         []string
	}{
		{"label equality", "pods", "app=web", "", []string{"default/web-1", "default/web-2"}},
		{"label set", "pods", "app in (dns,other)", "", []string{"kube-system/dns-1"}},
		{"label exists", "pods", "tier", "", []string{"default/web-1"}},
		{"label not exists", "pods", "!tier", "", []string{"default/web-2", "kube-system/dns-1"}},
		{"node name", "pods", "", "spec.nodeName=node-a", []string{"default/web-1", "kube-system/dns-1"}},
		{"spec.host alias", "pods", "", "spec.host=node-a", []string{"default/web-1", "kube-system/dns-1"}},
		{"phase inequality", "pods", "", "status.phase!=Running", []string{"kube-system/dns-1"}},
		{"double equals", "pods", "", "metadata.name==web-2", []string{"default/web-2"}},
		{"namespace field", "pods", "", "metadata.namespace=kube-system", []string{"kube-system/dns-1"}},
		{"comma-joined fields", "pods", "", "spec.nodeName=node-a,status.phase=Running", []string{"default/web-1"}},
		{"every pod field", "pods", "", "spec.restartPolicy=Always,spec.schedulerName=default-scheduler," +
			"spec.serviceAccountName=default,spec.hostNetwork=false,status.podIP=10.0.0.7,status.nominatedNodeName=",
			[]string{"default/web-1", "default/web-2", "kube-system/dns-1"}},
		{"label and field", "pods", "app=web", "spec.nodeName=node-b", []string{"default/web-2"}},
		{"node unschedulable", "nodes", "", "spec.unschedulable=true", []string{"node-b"}},
		{"configmap name", "configmaps", "", "metadata.name=settings", []string{"default/settings"}},
		{"no match", "pods", "app=none", "", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := url.Values{}
			if tt.label != "" {
				q.Set("labelSelector", tt.label)
			}
			if tt.field != "" {
				q.Set("fieldSelector", tt.field)
			}
			l := MustList(t, MustGet(t, srv.URL+"/api/v1/"+tt.resource+"?"+q.Encode()))
			if got := l.names(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got items %v, want %v", got, tt.want)
			}
		})
	}
}

func TestListErrors(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	tests := []struct {
		name, path  string
		wantCode    int
		wantReason  string
		wantMessage string // substring
	}{
		{"unsupported pod field", "/api/v1/pods?fieldSelector=spec.foo%3Dx", 400, "BadRequest", "field label not supported: spec.foo"},
		{"pod field on configmaps", "/api/v1/configmaps?fieldSelector=spec.nodeName%3Dx", 400, "BadRequest", `"spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{"node field on pods", "/api/v1/pods?fieldSelector=spec.unschedulable%3Dtrue", 400, "BadRequest", "field label not supported: spec.unschedulable"},
		{"bad field selector", "/api/v1/pods?fieldSelector=spec.nodeName", 400, "BadRequest", "invalid selector"},
		{"bad label selector", "/api/v1/pods?labelSelector=app+in+(", 400, "BadRequest", ""},
		{"bad resourceVersion", "/api/v1/pods?resourceVersion=abc", 400, "BadRequest", `invalid resource version: resourceVersion: Invalid value: "abc"`},
		{"continue token", "/api/v1/pods?limit=1&continue=abc", 400, "BadRequest", "invalid continue token: continue key is not valid: "},
		{"match without resourceVersion", "/api/v1/pods?resourceVersionMatch=Exact", 422, "Invalid", "resourceVersionMatch is forbidden unless resourceVersion is provided"},
		{"unknown match", "/api/v1/pods?resourceVersion=1&resourceVersionMatch=Newest", 422, "Invalid", "Unsupported value"},
		{"exact with 0", "/api/v1/pods?resourceVersion=0&resourceVersionMatch=Exact", 422, "Invalid", `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`},
		{"match with continue", "/api/v1/pods?resourceVersion=1&resourceVersionMatch=Exact&continue=x", 422, "Invalid", "resourceVersionMatch is forbidden when continue is provided"},
		{"sendInitialEvents on a list", "/api/v1/pods?sendInitialEvents=true", 422, "Invalid", "sendInitialEvents is forbidden for list"},
		{"exact older resourceVersion", "/api/v1/pods?resourceVersion=10&resourceVersionMatch=Exact", 410, "Expired", "The resourceVersion for the provided list is too old."},
		{"legacy exact with limit", "/api/v1/pods?resourceVersion=10&limit=500", 410, "Expired", "The resourceVersion for the provided list is too old."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := MustGet(t, srv.URL+tt.path)
			st := MustStatus(t, r)
			if r.code != tt.wantCode || string(st.Reason) != tt.wantReason {
				t.Fatalf("got %d %s (%s), want %d %s", r.code, st.Reason, st.Message, tt.wantCode, tt.wantReason)
			}
			if !strings.Contains(st.Message, tt.wantMessage) {
				t.Errorf("got message %q, want it to contain %q", st.Message, tt.wantMessage)
			}
			if tt.wantCode == 422 && (st.Details == nil || st.Details.Kind != "ListOptions" || st.Details.Group != "meta.k8s.io") {
				t.Errorf("got details %+v, want kind ListOptions group meta.k8s.io", st.Details)
			}
		})
	}
}

func TestListWaitsForResourceVersion(t *testing.T) {
	f := newFixture(t)
	fc := clocktesting.NewFakeClock(time.Now())
	srv := MustServer(t, Config{Caches: f.caches(), Clock: fc})
	done := goGet(srv.URL + "/api/v1/nodes?resourceVersion=22&resourceVersionMatch=Exact")
	waitForWaiters(t, fc, 1)
	MustApply(t, f.nodes, 22, watch.Added, nodeJSON("node-c", 22, false))
	l := MustList(t, MustReceive(t, done))
	if l.Metadata.ResourceVersion != "22" {
		t.Errorf("got resourceVersion %q, want \"22\"", l.Metadata.ResourceVersion)
	}
	if got, want := l.names(), []string{"node-a", "node-b", "node-c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got items %v, want %v", got, want)
	}
}

func TestNotReadyResource(t *testing.T) {
	notReady := versioncache.New(podsGVR, 0)
	notReady.SetInfo(infos[podsGVR])
	noInfo := versioncache.New(configMapsGVR, 0)
	noInfo.Replace(nil, 5)
	t.Cleanup(notReady.Close)
	t.Cleanup(noInfo.Close)
	srv := MustServer(t, Config{Caches: []*versioncache.Cache{notReady, noInfo}})
	for _, path := range []string{
		"/api/v1/pods", "/api/v1/namespaces/default/pods/x", "/api/v1/pods?watch=true",
		"/api/v1/configmaps", "/api/v1/namespaces/default/configmaps/x",
	} {
		t.Run(path, func(t *testing.T) {
			r := MustGet(t, srv.URL+path)
			st := MustStatus(t, r)
			if r.code != http.StatusTooManyRequests || st.Message != "storage is (re)initializing" {
				t.Errorf("got %d %q, want 429 \"storage is (re)initializing\"", r.code, st.Message)
			}
			if r.header.Get("Retry-After") != "1" {
				t.Errorf("got Retry-After %q, want \"1\"", r.header.Get("Retry-After"))
			}
		})
	}
}

// A kind outside the core group may have fields named like a pod's; only
// the metadata fields are selectable for it.
func TestFieldLabelsAreKindAndGroupSpecific(t *testing.T) {
	gk := schema.GroupKind{Group: "example.com", Kind: "Pod"}
	sel, err := convertFieldSelector(mustFieldSelector(t, "metadata.name=a"), gk)
	if err != nil || sel.String() != "metadata.name=a" {
		t.Errorf("got %v, %v, want metadata.name=a", sel, err)
	}
	if _, err := convertFieldSelector(mustFieldSelector(t, "spec.nodeName=a"), gk); err == nil {
		t.Errorf("got no error for spec.nodeName on %v, want one", gk)
	}
}

// The kubelet lists services with spec.clusterIP!=None; secrets and
// namespaces have kind-specific fields too.
func TestKindSpecificFieldLabels(t *testing.T) {
	tests := []struct {
		kind, sel string
		ok        bool
	}{
		{"Service", "spec.clusterIP!=None", true},
		{"Service", "spec.type=NodePort", true},
		{"Secret", "type=kubernetes.io/tls", true},
		{"Namespace", "status.phase=Active,metadata.name=ns", true},
		{"Namespace", "name=ns", false},
		{"Namespace", "metadata.namespace=x", false},
		{"Node", "metadata.namespace=", false},
		{"Pod", "status.podIPs=10.0.0.1", true},
		{"ConfigMap", "type=x", false},
		{"Service", "spec.nodeName=n", false},
	}
	for _, tt := range tests {
		t.Run(tt.kind+" "+tt.sel, func(t *testing.T) {
			_, err := convertFieldSelector(mustFieldSelector(t, tt.sel), schema.GroupKind{Kind: tt.kind})
			if got := err == nil; got != tt.ok {
				t.Errorf("got accepted=%v (%v), want %v", got, err, tt.ok)
			}
		})
	}
}
