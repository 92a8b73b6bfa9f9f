package cloudsync

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link/linktest"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Sizes of the benchmark data set of issue 12.
const (
	benchPods       = 5000
	benchConfigMaps = 2000
	benchCMBytes    = 1024 // of a configmap's data
)

// pagedBodies serves LIST bodies (continue token "" first, then "1", ...).
func pagedBodies(bodies [][]byte) *pagedLW {
	p := &pagedLW{pages: map[string]func() (runtime.Object, error){}}
	for i, body := range bodies {
		tok := ""
		if i > 0 {
			tok = fmt.Sprint(i)
		}
		p.pages[tok] = func() (runtime.Object, error) { return decodeList(body) }
	}
	return p
}

// withContinue sets a LIST body's metadata: resourceVersion rv, continue next.
func withContinue(body []byte, rv uint64, next string) []byte {
	meta := fmt.Sprintf(`"metadata":{"resourceVersion":"%d","continue":%q}`, rv, next)
	i := bytes.Index(body, []byte(`"metadata":{"resourceVersion":"100"}`))
	return append(append(append([]byte(nil), body[:i]...), meta...), body[i+len(`"metadata":{"resourceVersion":"100"}`):]...)
}

// podPages is the pods of the data set in LIST pages.
func podPages(b *testing.B) [][]byte {
	page := podListPage(b, listPageSize)
	var bodies [][]byte
	for p := range benchPods / listPageSize {
		body := bytes.ReplaceAll(page, []byte(`"name":"pod-`), fmt.Appendf(nil, `"name":"p%d-`, p))
		next := ""
		if p+1 < benchPods/listPageSize {
			next = fmt.Sprint(p + 1)
		}
		bodies = append(bodies, withContinue(body, benchPods+1, next))
	}
	return bodies
}

// configMapPages is the configmaps of the data set in LIST pages.
func configMapPages() [][]byte {
	data := strings.Repeat("x", benchCMBytes)
	var bodies [][]byte
	for p := range benchConfigMaps / listPageSize {
		var items []string
		for i := range listPageSize {
			items = append(items, fmt.Sprintf(`{"metadata":{"name":"cm-%d-%d","namespace":"bench","resourceVersion":"%d"},"data":{"k":%q}}`,
				p, i, p*listPageSize+i+1, data))
		}
		next := ""
		if p+1 < benchConfigMaps/listPageSize {
			next = fmt.Sprint(p + 1)
		}
		bodies = append(bodies, fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"%d","continue":%q},"items":[%s]}`,
			benchConfigMaps+1, next, strings.Join(items, ",")))
	}
	return bodies
}

// BenchmarkInitialSync is a first sync of the data set of issue 12 (5,000
// pods of about 9 KB, 2,000 configmaps of 1 KB): LIST pages decoded,
// committed to a SQLite file, and published to the caches. It reports
// objects applied per second.
func BenchmarkInitialSync(b *testing.B) {
	resources := []struct {
		gvr    schema.GroupVersionResource
		bodies [][]byte
	}{
		{schema.GroupVersionResource{Version: "v1", Resource: "pods"}, podPages(b)},
		{cmGVR, configMapPages()},
	}
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		st, err := metastore.Open(ctx, filepath.Join(b.TempDir(), "state.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for _, r := range resources {
			cache := versioncache.New(r.gvr, versioncache.DefaultCapacity)
			s := New(Config{Resource: Resource{GVR: r.gvr}, ListerWatcher: pagedBodies(r.bodies).lw(),
				Store: st, Cache: cache, Link: linktest.Up(b), Logger: log})
			if err := s.relist(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(benchPods+benchConfigMaps)*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
}
