package offline

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

type prefixLog struct {
	mu       sync.Mutex
	prefixes []string // guarded by mu
}

func (p *prefixLog) DeleteMetaPrefix(_ context.Context, prefix string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prefixes = append(p.prefixes, prefix)
	return nil
}

func (p *prefixLog) got() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.prefixes...)
}

func TestForgetDeletedPods(t *testing.T) {
	pod := func(rv string) *versioncache.Object {
		o, err := versioncache.NewObject([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns","name":"p","uid":"uid-1","resourceVersion":"` + rv + `"}}`))
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	pods := versioncache.New(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, 10)
	pods.Replace([]*versioncache.Object{pod("5")}, 5)
	store := &prefixLog{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ForgetDeletedPods(ctx, pods, store, slog.New(slog.DiscardHandler)) }()

	deadline := time.Now().Add(10 * time.Second)
	for len(store.got()) == 0 {
		// Re-apply until the follower's watch is registered and sees it.
		rv := pods.RV() + 1
		_ = pods.Apply([]versioncache.Event{{Type: watch.Modified, Object: pod(itoa(rv))}}, rv)
		_ = pods.Apply([]versioncache.Event{{Type: watch.Deleted, Object: pod(itoa(rv + 1))}}, rv+1)
		_ = pods.Apply([]versioncache.Event{{Type: watch.Added, Object: pod(itoa(rv + 2))}}, rv+2)
		if time.Now().After(deadline) {
			t.Fatalf("no stored tokens removed after the pod's deletion")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := store.got()[0]; got != "tokenrequest/uid-1/" {
		t.Errorf("removed prefix: got %q, want %q", got, "tokenrequest/uid-1/")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("ForgetDeletedPods: got %v, want nil", err)
	}
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }
