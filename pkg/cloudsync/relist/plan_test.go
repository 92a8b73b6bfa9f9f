package relist

import (
	"errors"
	"fmt"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func meta(name string, rv uint64, uid string) metav1.PartialObjectMetadata {
	return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
		ResourceVersion: fmt.Sprint(rv), UID: types.UID(uid)}}
}

func key(name string, rv uint64, uid string) metastore.Key {
	return metastore.Key{Namespace: "ns", Name: name, RV: rv, UID: uid}
}

func TestCompare(t *testing.T) {
	// Twenty unchanged objects keep every case under the changed share.
	var keys []metastore.Key
	var metas []metav1.PartialObjectMetadata
	for i := range 20 {
		keys = append(keys, key(fmt.Sprint("same", i), 5, "u"))
		metas = append(metas, meta(fmt.Sprint("same", i), 5, "u"))
	}
	for _, tc := range []struct {
		name       string
		keys       []metastore.Key
		metas      []metav1.PartialObjectMetadata
		listRV     uint64
		wantFetch  []string
		wantWhole  []string
		wantChange []string
		wantErr    error
	}{
		{name: "nothing changed", listRV: 20},
		{name: "new object", metas: []metav1.PartialObjectMetadata{meta("new", 15, "n")}, listRV: 20,
			wantFetch: []string{"new"}},
		{name: "changed object", keys: []metastore.Key{key("c", 4, "c")}, metas: []metav1.PartialObjectMetadata{meta("c", 15, "c")},
			listRV: 20, wantFetch: []string{"c"}, wantChange: []string{"c"}},
		{name: "deleted object", keys: []metastore.Key{key("gone", 4, "g")}, listRV: 20, wantWhole: []string{"gone"}},
		{name: "recreated after the watermark", keys: []metastore.Key{key("r", 4, "old")},
			metas: []metav1.PartialObjectMetadata{meta("r", 15, "new")}, listRV: 20,
			wantFetch: []string{"r"}, wantChange: []string{"r"}, wantWhole: []string{"r"}},
		{name: "another UID the watermark covers", keys: []metastore.Key{key("r", 4, "old")},
			metas: []metav1.PartialObjectMetadata{meta("r", 8, "new")}, listRV: 20, wantErr: ErrFallback},
		{name: "list behind the watermark", listRV: 9, wantErr: ErrFallback},
		{name: "too many changed", metas: []metav1.PartialObjectMetadata{meta("a", 15, "a"), meta("b", 15, "b"),
			meta("c", 15, "c")}, listRV: 20, wantErr: ErrFallback},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Compare(append(append([]metastore.Key(nil), keys...), tc.keys...), 10,
				append(append([]metav1.PartialObjectMetadata(nil), metas...), tc.metas...), tc.listRV)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("got error %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			var fetch, whole, changed []string
			for _, it := range p.Fetch {
				fetch = append(fetch, it.Name)
			}
			for _, n := range p.Whole {
				whole = append(whole, n.Name)
			}
			for n := range p.Changed {
				changed = append(changed, n.Name)
			}
			if fmt.Sprint(fetch) != fmt.Sprint(tc.wantFetch) || fmt.Sprint(whole) != fmt.Sprint(tc.wantWhole) ||
				fmt.Sprint(changed) != fmt.Sprint(tc.wantChange) {
				t.Errorf("got fetch %v whole %v changed %v, want %v %v %v", fetch, whole, changed,
					tc.wantFetch, tc.wantWhole, tc.wantChange)
			}
		})
	}
}
