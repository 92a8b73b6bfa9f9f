package startup

import (
	"log/slog"
	"runtime"
	"sync"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// minDecodeShare (objects) is the fewest stored objects one goroutine of
// decodeObjects decodes: below it, starting a goroutine costs more than
// it saves, so small resources decode on the caller's goroutine.
const minDecodeShare = 256

// decodeObjects decodes stored objects in order, skipping (and logging)
// those that do not decode. Decoding is CPU-bound and each object is
// independent, so large resources are split among up to GOMAXPROCS
// goroutines.
func decodeObjects(stored []metastore.Object, log *slog.Logger) []*versioncache.Object {
	decoded := make([]*versioncache.Object, len(stored))
	errs := make([]error, len(stored))
	inParallel(len(stored), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			decoded[i], errs[i] = versioncache.NewObject(stored[i].Raw)
		}
	})
	objs := decoded[:0] // compacted in place: the write index never passes the read index
	for i, o := range decoded {
		if errs[i] != nil {
			s := stored[i]
			log.Error("skipping undecodable stored object", "namespace", s.Namespace, "name", s.Name, "err", errs[i])
			continue
		}
		objs = append(objs, o)
	}
	return objs
}

// inParallel calls fn on consecutive ranges covering [0, n), each of at
// least minDecodeShare items, on up to GOMAXPROCS goroutines, and returns
// when every call has.
func inParallel(n int, fn func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n/minDecodeShare)
	if workers <= 1 {
		fn(0, n)
		return
	}
	share := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += share {
		wg.Go(func() { fn(lo, min(lo+share, n)) })
	}
	wg.Wait()
}
