package startup

import (
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// decoded is one stored encoding's decoding made ahead of its use.
type decoded struct {
	obj  *versioncache.Object
	err  error
	done bool // false: not decoded ahead
}

// aheadDecodings are decodeAhead's results, by event index.
type aheadDecodings struct{ obj, prev []decoded }

// decodeAhead decodes, on up to GOMAXPROCS goroutines, the logged objects
// and previous states that decodeEvents would decode one after another:
// those the state (latest) does not hold at the same RV with the same
// bytes, and previous states that differ from their key's preceding event
// object. decodeEvents still decides what to share, so a decoding made
// ahead is only ever a decoding it would have made itself.
func decodeAhead(stored []metastore.Event, latest map[objKey]*versioncache.Object) aheadDecodings {
	type task struct {
		raw []byte
		out *decoded
	}
	ahead := aheadDecodings{obj: make([]decoded, len(stored)), prev: make([]decoded, len(stored))}
	var tasks []task
	lastRaw := map[objKey][]byte{} // each key's preceding event object's encoding
	for i, s := range stored {
		k := objKey{s.Object.Namespace, s.Object.Name}
		if have := latest[k]; have == nil || have.RV != s.Object.RV || string(have.Raw) != string(s.Object.Raw) {
			tasks = append(tasks, task{s.Object.Raw, &ahead.obj[i]})
		}
		if last, ok := lastRaw[k]; s.Prev != nil && (!ok || string(last) != string(s.Prev)) {
			tasks = append(tasks, task{s.Prev, &ahead.prev[i]})
		}
		lastRaw[k] = s.Object.Raw
	}
	inParallel(len(tasks), func(lo, hi int) {
		for _, t := range tasks[lo:hi] {
			o, err := versioncache.NewObject(t.raw)
			*t.out = decoded{obj: o, err: err, done: true}
		}
	})
	return ahead
}
