package metastore

import (
	"context"
	"fmt"
	"testing"
)

func TestKeysAndObjects(t *testing.T) {
	s := MustOpen(t, testDBPath(t))
	MustApply(t, s, "cms", []Op{
		{Object: Object{Namespace: "b", Name: "x", RV: 7, Raw: []byte(`{"metadata":{"name":"x","uid":"u-x"}}`)}},
		{Object: Object{Namespace: "a", Name: "y", RV: 5, Raw: []byte(`{"metadata":{"name":"y","uid":"u-y"}}`)}},
		{Object: Object{Namespace: "a", Name: "no-uid", RV: 6, Raw: []byte(`{"metadata":{"name":"no-uid"}}`)}},
		{Object: Object{Namespace: "a", Name: "bad", RV: 4, Raw: []byte(`not json`)}},
	}, 9)
	MustApply(t, s, "other", []Op{{Object: Object{Name: "z", RV: 1, Raw: []byte(`{}`)}}}, 1)
	keys, wm, err := s.Keys(context.Background(), "cms")
	if err != nil {
		t.Fatalf("Keys: got error %v, want nil", err)
	}
	if got, want := fmt.Sprint(keys), "[{a bad 4 } {a no-uid 6 } {a y 5 u-y} {b x 7 u-x}]"; got != want || wm != 9 {
		t.Errorf("Keys: got %s at %d, want %s at 9", got, wm, want)
	}
	objs, err := s.Objects(context.Background(), "cms", []Name{{"b", "x"}, {"a", "gone"}, {"a", "y"}})
	if err != nil {
		t.Fatalf("Objects: got error %v, want nil", err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, fmt.Sprintf("%s/%s@%d=%s", o.Namespace, o.Name, o.RV, o.Raw))
	}
	want := `[b/x@7={"metadata":{"name":"x","uid":"u-x"}} a/y@5={"metadata":{"name":"y","uid":"u-y"}}]`
	if fmt.Sprint(got) != want {
		t.Errorf("Objects: got %v, want %s", got, want)
	}
	if keys, wm, err := s.Keys(context.Background(), "never"); err != nil || len(keys) != 0 || wm != 0 {
		t.Errorf("Keys of an unknown resource: got %v at %d (%v), want none at 0", keys, wm, err)
	}
}

// TestSealedKeysReadUID checks that the keys of a sealed resource, whose
// UIDs SQLite cannot read, carry the same UIDs as an unsealed one's.
func TestSealedKeysReadUID(t *testing.T) {
	s := openSealed(t, testDBPath(t), testSealing(t))
	MustApply(t, s, sealedResource, []Op{
		{Object: Object{Namespace: "b", Name: "x", RV: 7, Raw: []byte(`{"metadata":{"name":"x","uid":"u-x"}}`)}},
		{Object: Object{Namespace: "a", Name: "y", RV: 5, Raw: []byte(`{"metadata":{"uid":"old","name":"y","uid":"u-y"}}`)}},
		{Object: Object{Namespace: "a", Name: "no-uid", RV: 6, Raw: []byte(`{"metadata":{"name":"no-uid"}}`)}},
		{Object: Object{Namespace: "a", Name: "bad", RV: 4, Raw: []byte(`not json`)}},
	}, 9)
	keys, wm, err := s.Keys(context.Background(), sealedResource)
	if err != nil {
		t.Fatalf("Keys: got error %v, want nil", err)
	}
	if got, want := fmt.Sprint(keys), "[{a bad 4 } {a no-uid 6 } {a y 5 u-y} {b x 7 u-x}]"; got != want || wm != 9 {
		t.Errorf("Keys: got %s at %d, want %s at 9", got, wm, want)
	}
}
