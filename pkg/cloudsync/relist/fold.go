package relist

import (
	"context"
	"slices"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

const (
	// foldMinItems is how many objects of one namespace a lean relist must
	// read before it considers one list of the namespace instead: fewer are
	// as cheap read alone.
	foldMinItems = 3
	// foldMaxRatio bounds how many listed objects of a namespace a folded
	// list may carry per object it is read for. kube-apiserver gzips a
	// LIST answer over 128 KiB but never a single object's, which costs
	// about 8 times its share of a gzipped list (see
	// leanMaxChangedPercent): a namespace list four times as large as the
	// reads it replaces moves no more bytes, in one request instead of
	// many, and one list a cloud restart multiplies by its fleet is far
	// cheaper for it than many requests.
	foldMaxRatio = 4
)

// NamespaceLister is a Source that can also list the resource's objects
// of one namespace, narrowed as its full list is, at exactly a
// resourceVersion, in the form a full list stores them. A Source that
// cannot (node scope's secrets and configmaps, which the Node authorizer
// lets a node read only by name) reads every object alone.
type NamespaceLister interface {
	ListAt(ctx context.Context, namespace string, rv uint64) ([]*versioncache.Object, error)
}

// FetchPlan reads p's new and changed objects at listRV, in the order of
// p.Fetch: with one list of their namespace where src can list one and
// the namespace has at least foldMinItems of them and at most
// foldMaxRatio listed objects per read, else one by one (Fetch). What a
// namespace list returns is checked as a single read is, so the result is
// still the state of one moment.
func FetchPlan(ctx context.Context, src Source, p Plan, listRV uint64) ([]*versioncache.Object, error) {
	folded := foldedNamespaces(src, p)
	var alone []Item
	var at []int
	for i, it := range p.Fetch {
		if !folded[it.Namespace] {
			alone, at = append(alone, it), append(at, i)
		}
	}
	got, err := Fetch(ctx, src, alone, listRV)
	if err != nil {
		return nil, err
	}
	out := make([]*versioncache.Object, len(p.Fetch))
	for j, i := range at {
		out[i] = got[j]
	}
	for _, ns := range sortedKeys(folded) {
		if err := fetchNamespace(ctx, src.(NamespaceLister), ns, p.Fetch, listRV, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// foldedNamespaces are the namespaces whose objects FetchPlan reads with
// one list.
func foldedNamespaces(src Source, p Plan) map[string]bool {
	if _, ok := src.(NamespaceLister); !ok {
		return nil
	}
	reads := map[string]int{}
	for _, it := range p.Fetch {
		if it.Namespace != "" { // a cluster-scoped object has no namespace to list
			reads[it.Namespace]++
		}
	}
	folded := map[string]bool{}
	for ns, n := range reads {
		if n >= foldMinItems && p.Listed[ns] <= foldMaxRatio*n {
			folded[ns] = true
		}
	}
	return folded
}

// fetchNamespace lists namespace ns at listRV and sets out[i] for each
// item of ns in items, checked as a single read is.
func fetchNamespace(ctx context.Context, src NamespaceLister, ns string, items []Item, listRV uint64, out []*versioncache.Object) error {
	objs, err := src.ListAt(ctx, ns, listRV)
	if err != nil {
		return readError("namespace "+ns, listRV, err)
	}
	byName := make(map[string]*versioncache.Object, len(objs))
	for _, o := range objs {
		if o.Namespace == ns {
			byName[o.Name] = o
		}
	}
	for i, it := range items {
		if it.Namespace != ns {
			continue
		}
		o := byName[it.Name]
		if err := checkRead(it, o, listRV); err != nil {
			return err
		}
		out[i] = o
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
