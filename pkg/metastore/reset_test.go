package metastore

import (
	"context"
	"testing"
)

func TestResetLowersWatermarkAndReplacesObjects(t *testing.T) {
	s := MustOpen(t, testDBPath(t))
	ctx := context.Background()
	if err := s.Apply(ctx, "pods", []Op{{Object: Object{Namespace: "a", Name: "old", RV: 90, Raw: []byte(`{}`)}}}, 100); err != nil {
		t.Fatalf("seed: %v", err)
	}
	fresh := []Object{{Namespace: "a", Name: "new", RV: 7, Raw: []byte(`{"x":1}`)}}
	if err := s.Reset(ctx, "pods", fresh, 10); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	objs, wm, err := s.Load(ctx, "pods")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if wm != 10 || len(objs) != 1 || objs[0].Name != "new" || objs[0].RV != 7 {
		t.Errorf("got watermark %d and %+v, want 10 and only a/new@7", wm, objs)
	}
	if err := s.Reset(ctx, "pods", []Object{{Namespace: "a", RV: 1}}, 11); err == nil {
		t.Errorf("Reset with an unnamed object: got nil error, want one")
	}
	if _, wm, _ := s.Load(ctx, "pods"); wm != 10 {
		t.Errorf("after a failed Reset: got watermark %d, want 10 unchanged", wm)
	}
}
