package kubeservice

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

var servicesGVRTest = schema.GroupVersionResource{Version: "v1", Resource: "services"}

// serveServices is the local API over a services cache with
// default/kubernetes and default/web, with the rewrite; callers act as the
// node when node is set, else as an unmarked caller.
func serveServices(t *testing.T, node bool) (*httptest.Server, *versioncache.Cache) {
	t.Helper()
	c := versioncache.New(servicesGVRTest, 0)
	c.SetInfo(metav1.APIResource{Name: "services", SingularName: "service", Namespaced: true, Kind: "Service",
		Verbs: metav1.Verbs{"get", "list", "watch"}})
	c.Replace([]*versioncache.Object{mustObject(t, cloudService), mustObject(t, otherService)}, 50)
	t.Cleanup(c.Close)
	rw, err := New(door, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := listwatch.New(listwatch.Config{Caches: []*versioncache.Cache{c},
		View: func(ctx context.Context, gvr schema.GroupVersionResource) listwatch.ObjectView {
			return rw.For(ctx, gvr)
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if node {
			r = r.WithContext(caller.AsNode(r.Context()))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, c
}

func get(t *testing.T, url, accept string) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: got %d %s, want 200", url, resp.StatusCode, b)
	}
	return b
}

// wantIP is what each caller must see as default/kubernetes's clusterIP.
func wantIP(node bool) string {
	if node {
		return "127.0.0.2"
	}
	return "10.0.0.1"
}

func TestServedEncodings(t *testing.T) {
	for _, node := range []bool{true, false} {
		srv, _ := serveServices(t, node)
		base := srv.URL + "/api/v1/namespaces/default/services"
		want := wantIP(node)
		t.Run(map[bool]string{true: "node", false: "other"}[node], func(t *testing.T) {
			var svc corev1.Service
			decode(t, get(t, base+"/kubernetes", ""), &svc)
			if svc.Spec.ClusterIP != want {
				t.Errorf("json get: got clusterIP %q, want %q", svc.Spec.ClusterIP, want)
			}
			var list corev1.ServiceList
			decode(t, get(t, base, ""), &list)
			if ip := clusterIPOf(list.Items, "kubernetes"); ip != want {
				t.Errorf("json list: got clusterIP %q, want %q", ip, want)
			}
			if ip := clusterIPOf(list.Items, "web"); ip != "10.0.0.9" {
				t.Errorf("json list: web's clusterIP %q, want 10.0.0.9", ip)
			}
			var pb corev1.Service
			decode(t, get(t, base+"/kubernetes", "application/vnd.kubernetes.protobuf"), &pb)
			if pb.Spec.ClusterIP != want {
				t.Errorf("protobuf get: got clusterIP %q, want %q", pb.Spec.ClusterIP, want)
			}
			tbl := string(get(t, base, "application/json;as=Table;v=v1;g=meta.k8s.io"))
			if !strings.Contains(tbl, `"`+want+`"`) {
				t.Errorf("table list does not show clusterIP %q", want)
			}
		})
	}
}

func TestServedWatch(t *testing.T) {
	for _, node := range []bool{true, false} {
		srv, c := serveServices(t, node)
		want := wantIP(node)
		resp, err := http.Get(srv.URL + "/api/v1/namespaces/default/services?watch=1&fieldSelector=metadata.name%3Dkubernetes")
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		next := func() corev1.Service {
			t.Helper()
			if !sc.Scan() {
				t.Fatalf("watch ended: %v", sc.Err())
			}
			var ev metav1.WatchEvent
			decode(t, sc.Bytes(), &ev)
			var svc corev1.Service
			decode(t, ev.Object.Raw, &svc)
			return svc
		}
		if svc := next(); svc.Spec.ClusterIP != want {
			t.Errorf("node %v, initial ADDED: got clusterIP %q, want %q", node, svc.Spec.ClusterIP, want)
		}
		modified := strings.Replace(cloudService, `"resourceVersion":"42"`, `"resourceVersion":"51"`, 1)
		if err := c.Apply([]versioncache.Event{{Type: watch.Modified, Object: mustObject(t, modified)}}, 51); err != nil {
			t.Fatal(err)
		}
		if svc := next(); svc.Spec.ClusterIP != want || svc.ResourceVersion != "51" {
			t.Errorf("node %v, MODIFIED: got clusterIP %q at %q, want %q at 51", node, svc.Spec.ClusterIP, svc.ResourceVersion, want)
		}
		resp.Body.Close()
	}
}

func decode(t *testing.T, b []byte, into any) {
	t.Helper()
	if strings.HasPrefix(string(b), "k8s\x00") {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(b, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		*into.(*corev1.Service) = *obj.(*corev1.Service)
		return
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}

func clusterIPOf(items []corev1.Service, name string) string {
	for _, s := range items {
		if s.Name == name {
			return s.Spec.ClusterIP
		}
	}
	return ""
}
