package versioncache

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/watch"
)

func BenchmarkApplyFanout(b *testing.B) {
	for _, watchers := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			c := MustReadyCache(b, DefaultCapacity, nil, 0)
			ws := make([]*Watcher, watchers)
			for i := range ws {
				ws[i] = MustWatch(b, c, 0, false, Predicate{})
			}
			objs := make([]*Object, 64)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rv := uint64(i + 1)
				if objs[i%len(objs)] == nil || objs[i%len(objs)].RV != rv {
					b.StopTimer()
					objs[i%len(objs)] = MustPod(b, "ns", fmt.Sprintf("p%d", i%len(objs)), rv, "web")
					b.StartTimer()
				}
				MustApply(b, c, rv, ev(watch.Modified, objs[i%len(objs)]))
				// Readers take each event and its shared frame.
				for _, w := range ws {
					e := <-w.ch
					_ = e.Frame(e.Type)
				}
			}
		})
	}
}

func BenchmarkList(b *testing.B) {
	const objects = 10000
	objs := make([]*Object, objects)
	for i := range objs {
		app := "web"
		if i%10 == 0 {
			app = "db"
		}
		objs[i] = MustPod(b, fmt.Sprintf("ns%d", i%20), fmt.Sprintf("p%d", i), uint64(i+1), app)
	}
	c := MustReadyCache(b, DefaultCapacity, objs, objects)
	tests := []struct {
		name string
		p    Predicate
		want int
	}{
		{"all", Predicate{}, objects},
		{"label", Predicate{Label: MustLabelSelector(b, "app=db")}, objects / 10},
		{"namespace", Predicate{Namespace: "ns3"}, objects / 20},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				list, _, err := listAll(c, tt.p)
				if err != nil || len(list) != tt.want {
					b.Fatalf("got %d objects, %v; want %d", len(list), err, tt.want)
				}
			}
		})
	}
}

func BenchmarkNewObject(b *testing.B) {
	raw := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"kube-system","name":"coredns-abc","resourceVersion":"123456",` +
		`"labels":{"k8s-app":"kube-dns","pod-template-hash":"abc"},"annotations":{"a":"b"},"uid":"0f1e2d3c"},` +
		`"spec":{"nodeName":"edge-1","restartPolicy":"Always","schedulerName":"default-scheduler","serviceAccountName":"coredns",` +
		`"containers":[{"name":"coredns","image":"registry.k8s.io/coredns/coredns:v1.11.1","args":["-conf","/etc/coredns/Corefile"],` +
		`"resources":{"limits":{"memory":"170Mi"},"requests":{"cpu":"100m","memory":"70Mi"}}}]},` +
		`"status":{"phase":"Running","podIP":"10.244.0.5","podIPs":[{"ip":"10.244.0.5"}],"conditions":[{"type":"Ready","status":"True"}]}}`)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewObject(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStateMemory reports the live heap a cache of 10k pods holds per
// object, including each pod's raw JSON (a minimal pod of about 150 bytes,
// so the figure is mostly the per-object overhead: labels, the pod's ten
// selectable fields and the index).
func BenchmarkStateMemory(b *testing.B) {
	const objects = 10000
	raws := make([][]byte, objects)
	for i := range raws {
		raws[i] = podJSON("ns", fmt.Sprintf("pod-%05d", i), uint64(i+1), "web", "node-1")
	}
	var perObject float64
	for b.Loop() {
		before := liveHeap()
		c := New(GVR{Version: "v1", Resource: "pods"}, DefaultCapacity)
		objs := make([]*Object, objects)
		for i, raw := range raws {
			objs[i] = MustNewObject(b, slices.Clone(raw))
		}
		c.Replace(objs, objects)
		perObject = float64(liveHeap()-before) / objects
		runtime.KeepAlive(c)
	}
	b.ReportMetric(perObject, "heap-B/object")
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
