package operations

import (
	"log/slog"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/pool"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
)

// A pool member gets a /readyz note per resource held for pods, none for
// the others; without a pool nothing is added.
func TestObservePoolMember(t *testing.T) {
	res := []cloudsync.Resource{{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}},
		{GVR: schema.GroupVersionResource{Version: "v1", Resource: "services"}, ForPods: true}}
	view := func() *View {
		return New(Config{Node: "n1", Link: func() bool { return true }, Clock: clocktesting.NewFakeClock(time.Now())})
	}
	o := view()
	o.ObservePoolMember(nil, nil, res)
	if len(o.notes) != 0 || o.upstreams != nil {
		t.Fatalf("without a pool: got %d notes, upstreams %v; want none", len(o.notes), o.upstreams != nil)
	}
	e, err := pool.New(pool.Config{Pool: "site-a", Namespace: "apiserver-lite-pool", Self: pool.Holder{Node: "n1", Address: "10.0.0.1:10552"},
		Leases: fake.NewClientset().CoordinationV1(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	o = view()
	o.ObservePoolMember(e, pool.NewStats(), res)
	if len(o.notes) != 1 || o.upstreams == nil {
		t.Fatalf("pool member: got %d notes, upstreams %v; want 1 note and the upstreams", len(o.notes), o.upstreams != nil)
	}
	if name, _, _ := o.notes[0](); name != "pool:"+res[1].Key() {
		t.Errorf("note: got %q, want pool:%s", name, res[1].Key())
	}
}
