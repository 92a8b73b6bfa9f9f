package relist

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// leanMaxChangedPercent is the share of listed objects, in percent,
	// above which a lean relist gives way to the full list. The cloud
	// gzips a LIST answer but not a single object's (kube-apiserver
	// compresses only answers over 128 KiB), so a changed object read
	// alone costs about 8 times its share of a gzipped full list (as
	// measured with make bench's 9 KB pods); with the metadata list, the
	// lean path moves about as many bytes as the full list at a tenth of
	// the objects changed, and takes longer, one request per object.
	leanMaxChangedPercent = 10
)

// ErrFallback is wrapped by every error of a lean relist after which the
// full list is the way on: the stored state is not a base to diff
// against, the cloud cannot serve the lean reads, or it answered them
// inconsistently. Nothing was committed.
var ErrFallback = errors.New("lean relist not possible")

// Item is one listed object to read: new, or changed since stored.
type Item struct {
	Namespace, Name string
	RV              uint64
	UID             string
}

// Plan is what the metadata list says a lean relist must read.
type Plan struct {
	// Fetch are the new and changed objects, in list order.
	Fetch []Item
	// Changed are the stored objects among Fetch.
	Changed map[metastore.Name]bool
	// Whole are the stored objects whose whole last state a DELETED event
	// carries, in (namespace, name) order: those the list lacks, and those
	// listed under another UID (deleted and created again since).
	Whole []metastore.Name
	// Listed counts the listed objects of each namespace (FetchPlan).
	Listed map[string]int
}

// Compare compares the stored keys at watermark wm with the listed
// metadata at listRV. As regressed does for a full list, it refuses a
// list behind the watermark or an object coming back with another UID at
// a version the watermark covers: the full list replaces the local state
// then.
func Compare(keys []metastore.Key, wm uint64, metas []metav1.PartialObjectMetadata, listRV uint64) (Plan, error) {
	if listRV < wm {
		return Plan{}, fmt.Errorf("%w: list at %d behind the watermark %d", ErrFallback, listRV, wm)
	}
	held := make(map[metastore.Name]metastore.Key, len(keys))
	for _, k := range keys {
		held[metastore.Name{Namespace: k.Namespace, Name: k.Name}] = k
	}
	p := Plan{Changed: map[metastore.Name]bool{}, Listed: map[string]int{}}
	recreated := map[metastore.Name]bool{}
	for i := range metas {
		m := &metas[i]
		rv, err := strconv.ParseUint(m.ResourceVersion, 10, 64)
		if err != nil {
			return Plan{}, fmt.Errorf("resource version %q of %s/%s: %w", m.ResourceVersion, m.Namespace, m.Name, err)
		}
		n := metastore.Name{Namespace: m.Namespace, Name: m.Name}
		p.Listed[m.Namespace]++
		k, ok := held[n]
		delete(held, n)
		switch {
		case ok && rv <= wm && k.UID != string(m.UID):
			return Plan{}, fmt.Errorf("%w: %s/%s back with another UID at %d", ErrFallback, n.Namespace, n.Name, rv)
		case ok && k.RV == rv:
			continue
		case ok:
			p.Changed[n] = true
			recreated[n] = k.UID != string(m.UID)
		}
		p.Fetch = append(p.Fetch, Item{Namespace: m.Namespace, Name: m.Name, RV: rv, UID: string(m.UID)})
	}
	for _, k := range keys {
		if n := (metastore.Name{Namespace: k.Namespace, Name: k.Name}); held[n] == k || recreated[n] {
			p.Whole = append(p.Whole, n)
		}
	}
	if len(p.Fetch)*100 > leanMaxChangedPercent*len(metas) {
		return Plan{}, fmt.Errorf("%w: %d of %d objects changed", ErrFallback, len(p.Fetch), len(metas))
	}
	return p, nil
}
