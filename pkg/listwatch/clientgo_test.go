package listwatch

import (
	"context"
	"reflect"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

func MustClientset(t testing.TB, host string) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: host})
	if err != nil {
		t.Fatalf("clientset: %v", err)
	}
	return cs
}

// An unmodified client-go clientset (protobuf-first Accept) lists pods with
// a field selector and gets typed objects.
func TestClientGoList(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	cs := MustClientset(t, srv.URL)
	pods, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{FieldSelector: "spec.nodeName=node-a"})
	if err != nil {
		t.Fatalf("list pods: %v", err)
	}
	var got []string
	for _, p := range pods.Items {
		got = append(got, p.Namespace+"/"+p.Name+"@"+p.Spec.NodeName)
	}
	if want := []string{"default/web-1@node-a", "kube-system/dns-1@node-a"}; !reflect.DeepEqual(got, want) || pods.ResourceVersion != "20" {
		t.Errorf("got %v at %q, want %v at \"20\"", got, pods.ResourceVersion, want)
	}
	if _, err := cs.CoreV1().Nodes().Get(context.Background(), "node-b", metav1.GetOptions{}); err != nil {
		t.Errorf("get node: %v", err)
	}
}

// A shared informer syncs from the local API and sees later changes: the
// reflector's list, its watch (and, on client-go with WatchList on, its
// WatchList request when client-go enables it by default) all work.
func TestClientGoInformer(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	cs := MustClientset(t, srv.URL)
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "pods", "",
		fields.OneTermEqualSelector("spec.nodeName", "node-a"))
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatalf("informer did not sync")
	}
	if got, want := inf.GetStore().ListKeys(), []string{"default/web-1", "kube-system/dns-1"}; !sameKeys(got, want) {
		t.Errorf("got keys %v after sync, want %v", got, want)
	}
	MustApply(t, f.pods, 21, watch.Added, podJSON("default", "new", 21, "node-a", "Pending", nil))
	MustApply(t, f.pods, 22, watch.Modified, podJSON("kube-system", "dns-1", 22, "node-b", "Running", nil))
	want := []string{"default/new", "default/web-1"}
	deadline := time.Now().Add(waitTimeout)
	for got := inf.GetStore().ListKeys(); !sameKeys(got, want); got = inf.GetStore().ListKeys() {
		if time.Now().After(deadline) {
			t.Fatalf("got keys %v, want %v", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if rv := inf.LastSyncResourceVersion(); rv != "22" {
		t.Errorf("got last sync RV %q, want \"22\"", rv)
	}
}

func sameKeys(got, want []string) bool {
	got = append([]string(nil), got...)
	sort.Strings(got)
	return reflect.DeepEqual(got, want)
}
