package kubeservice

import (
	"context"
	"encoding/json"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// cloudService is default/kubernetes as kube-apiserver creates it.
const cloudService = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"kubernetes","namespace":"default",` +
	`"resourceVersion":"42","uid":"u1","labels":{"component":"apiserver","provider":"kubernetes"}},` +
	`"spec":{"clusterIP":"10.0.0.1","clusterIPs":["10.0.0.1"],"ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack",` +
	`"ports":[{"name":"https","port":443,"protocol":"TCP","targetPort":6443}],"type":"ClusterIP","sessionAffinity":"None"}}`

const otherService = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"default","resourceVersion":"43"},` +
	`"spec":{"clusterIP":"10.0.0.9","ports":[{"name":"https","port":443}]}}`

var door = netip.MustParseAddrPort("127.0.0.2:10551")

func mustObject(t *testing.T, raw string) *versioncache.Object {
	t.Helper()
	o, err := versioncache.NewObject([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func decodeService(t *testing.T, o *versioncache.Object) corev1.Service {
	t.Helper()
	var svc corev1.Service
	if err := json.Unmarshal(o.Raw, &svc); err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestObject(t *testing.T) {
	rw, err := New(door, nil)
	if err != nil {
		t.Fatal(err)
	}
	src := mustObject(t, cloudService)
	got := rw.Object(src)
	svc := decodeService(t, got)
	if svc.Spec.ClusterIP != "127.0.0.2" || len(svc.Spec.ClusterIPs) != 1 || svc.Spec.ClusterIPs[0] != "127.0.0.2" {
		t.Errorf("clusterIP %q, clusterIPs %v: want 127.0.0.2", svc.Spec.ClusterIP, svc.Spec.ClusterIPs)
	}
	if p := svc.Spec.Ports[0]; p.Port != 10551 || p.TargetPort.IntValue() != 6443 || p.Name != "https" {
		t.Errorf("port %+v: want https port 10551, targetPort 6443 kept", p)
	}
	if got.RV != src.RV || svc.ResourceVersion != "42" || svc.Labels["component"] != "apiserver" {
		t.Errorf("rv %d, resourceVersion %q, labels %v: want the cloud's", got.RV, svc.ResourceVersion, svc.Labels)
	}
	if again := rw.Object(src); again != got {
		t.Error("a second read of the same version rewrote it again, want the kept rewrite")
	}
	other := mustObject(t, otherService)
	if rw.Object(other) != other {
		t.Error("default/web was rewritten, want it unchanged")
	}
}

func TestObjectIPv6(t *testing.T) {
	rw, err := New(netip.MustParseAddrPort("[fd00::10]:10551"), nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := decodeService(t, rw.Object(mustObject(t, cloudService)))
	if svc.Spec.ClusterIP != "fd00::10" || len(svc.Spec.IPFamilies) != 1 || svc.Spec.IPFamilies[0] != corev1.IPv6Protocol {
		t.Errorf("clusterIP %q, ipFamilies %v: want fd00::10 and IPv6", svc.Spec.ClusterIP, svc.Spec.IPFamilies)
	}
}

func TestObjectWithoutPorts(t *testing.T) {
	rw, _ := New(door, nil)
	src := mustObject(t, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"kubernetes","namespace":"default","resourceVersion":"5"},"spec":{"clusterIP":"10.0.0.1"}}`)
	if got := rw.Object(src); got != src {
		t.Errorf("a service without ports: got %s, want it unchanged", got.Raw)
	}
}

func TestNew(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:10551", "[::]:10551", "127.0.0.2:0"} {
		if _, err := New(netip.MustParseAddrPort(addr), nil); err == nil {
			t.Errorf("New(%s): got no error, want one", addr)
		}
	}
}

func TestFor(t *testing.T) {
	rw, _ := New(door, nil)
	services := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	node := caller.AsNode(context.Background())
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		gvr     schema.GroupVersionResource
		rewrite bool
	}{
		{"node reads services", node, services, true},
		{"node reads pods", node, pods, false},
		{"unmarked caller reads services", context.Background(), services, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := rw.For(tc.ctx, tc.gvr) != nil; got != tc.rewrite {
				t.Errorf("got a view %v, want %v", got, tc.rewrite)
			}
		})
	}
}
