package startup

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

func TestLoadCaches(t *testing.T) {
	ctx := context.Background()
	e := mustEnv(t, t.TempDir())
	synced := configmaps("a")
	never := configmaps("b")
	info, err := json.Marshal(versioncache.Info{Name: "configmaps", Kind: "ConfigMap", Namespaced: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.PutMeta(ctx, synced.InfoKey, info); err != nil {
		t.Fatalf("put info: %v", err)
	}
	ops := []metastore.Op{{Object: storedObject(mustObject(t, cm("a", "one", 18, "x")))}}
	if err := e.store.Apply(ctx, synced.Key, ops, 20); err != nil {
		t.Fatalf("seed: %v", err)
	}
	caches, err := LoadCaches(ctx, e.store, []Resource{synced, never}, 10, slog.Default())
	if err != nil {
		t.Fatalf("LoadCaches: %v", err)
	}
	if got := len(caches); got != 2 {
		t.Fatalf("got %d caches, want 2", got)
	}
	if !caches[0].Ready() || caches[0].RV() != 20 {
		t.Errorf("synced cache: got ready %v rv %d, want ready at 20", caches[0].Ready(), caches[0].RV())
	}
	if caches[1].Ready() {
		t.Errorf("never-synced cache: got ready, want not ready")
	}

	if err := e.store.PutMeta(ctx, never.InfoKey, []byte("{garbage")); err != nil {
		t.Fatalf("put info: %v", err)
	}
	if _, err := LoadCaches(ctx, e.store, []Resource{never}, 10, slog.Default()); err == nil {
		t.Errorf("LoadCaches with undecodable info: got nil error, want one")
	}
}
