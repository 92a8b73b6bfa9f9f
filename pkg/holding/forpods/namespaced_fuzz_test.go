package forpods

import (
	"context"
	"testing"
)

// FuzzStoredNamespaced feeds stored owners values, read from disk and so
// untrusted, to what parses them at restart and in inspect: nothing
// panics, and a restored holding is always a namespaced one whose key
// names the value.
func FuzzStoredNamespaced(f *testing.F) {
	f.Add(`{"group":"example.com","version":"v1","resource":"widgets","namespace":"app","owners":[{"namespace":"app","name":"a","uid":"u","serviceAccount":"s"}]}`)
	f.Add(`{"version":"v1","resource":"configmaps","namespace":"a?b=c&forPods=false"}`)
	f.Add(`{"owners":null}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, value string) {
		store := newMemStore()
		probe := nsOwnersKey("example.com/v1/widgets?forPods=true&namespace=app")
		store.meta[probe] = []byte(value)
		got, err := StoredNamespaced(context.Background(), memLister{store})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			if r.Resource.Namespace == "" || !r.Resource.ForPods || nsOwnersKey(r.Resource.Key()) != probe {
				t.Errorf("restored %+v from a value stored under %s", r.Resource, probe)
			}
		}
		_, _ = StoredNamespacedHolding("example.com/v1/widgets?forPods=true&namespace=app", []byte(value))
		_ = NamespacedOwnersKey(value)
	})
}
