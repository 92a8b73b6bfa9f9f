package startup

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// A streamed restore, spanning several slices with an undecodable object
// in one of them, fills the cache as a restore from the whole snapshot
// does.
func TestRestoreStreamedMatchesWhole(t *testing.T) {
	const stored = 2*streamChunk + 5 // objects: three slices
	ctx := context.Background()
	e := mustEnv(t, t.TempDir())
	res := configmaps("")
	info, err := json.Marshal(versioncache.Info{Name: "configmaps", Kind: "ConfigMap", Namespaced: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.PutMeta(ctx, res.InfoKey, info); err != nil {
		t.Fatalf("put info: %v", err)
	}
	var ops []metastore.Op
	for i := range stored {
		o := storedObject(mustObject(t, cm("a", fmt.Sprintf("cm-%04d", i), uint64(i+1), "x")))
		if i == streamChunk+1 {
			o.Raw = []byte("{not json")
		}
		ops = append(ops, metastore.Op{Object: o})
	}
	if err := e.store.Apply(ctx, res.Key, ops, stored); err != nil {
		t.Fatalf("seed: %v", err)
	}
	next := storedObject(mustObject(t, cm("a", "cm-0003", stored+1, "y")))
	if err := e.store.Apply(ctx, res.Key, []metastore.Op{{Object: next}}, stored+1); err != nil {
		t.Fatalf("seed event: %v", err)
	}
	caches, err := LoadCaches(ctx, e.store, []Resource{res}, 10, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("LoadCaches: %v", err)
	}
	snap, err := e.store.LoadSnapshot(ctx, res.Key)
	if err != nil {
		t.Fatalf("LoadSnapshot: %v", err)
	}
	whole := versioncache.New(cmGVR, 10)
	Fill(whole, snap, slog.New(slog.DiscardHandler))
	got, gotRV, err := caches[0].List(versioncache.Predicate{})
	if err != nil {
		t.Fatalf("List streamed: %v", err)
	}
	want, wantRV, err := whole.List(versioncache.Predicate{})
	if err != nil {
		t.Fatalf("List whole: %v", err)
	}
	if len(got) != stored-1 || len(got) != len(want) || gotRV != wantRV {
		t.Fatalf("got %d objects at %d, want %d at %d", len(got), gotRV, len(want), wantRV)
	}
	for i := range got {
		if got[i].Name != want[i].Name || got[i].RV != want[i].RV {
			t.Fatalf("object %d: got %s@%d, want %s@%d", i, got[i].Name, got[i].RV, want[i].Name, want[i].RV)
		}
	}
}
