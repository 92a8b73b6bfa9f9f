package operations

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/holding/forpods"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

// inspect reports a stopped daemon's namespaced holdings with their scope
// and owners, and its table lists them.
func TestInspectNamesNamespacedHoldings(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	store, err := metastore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	const key = "example.com/v1/widgets?forPods=true&namespace=app"
	if err := store.Apply(ctx, key, []metastore.Op{{Object: metastore.Object{Namespace: "app", Name: "w", RV: 7,
		Raw: []byte(`{"metadata":{"namespace":"app","name":"w","resourceVersion":"7"}}`)}}}, 7); err != nil {
		t.Fatal(err)
	}
	owners := `{"group":"example.com","version":"v1","resource":"widgets","namespace":"app",` +
		`"owners":[{"namespace":"app","name":"operator-a","uid":"u1","serviceAccount":"operator"}]}`
	if err := store.PutMeta(ctx, forpods.NamespacedOwnersKey(key), []byte(owners)); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	doc, err := InspectDataDir(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Holdings) != 1 {
		t.Fatalf("got %d namespaced holdings, want 1: %+v", len(doc.Holdings), doc.Holdings)
	}
	h := doc.Holdings[0]
	if h.Scope != forpods.ScopeNamespace || h.Namespace != "app" || h.Resource != "example.com/v1/widgets" ||
		h.Objects != 1 || !slices.Equal(h.ServiceAccounts, []string{"app/operator"}) {
		t.Errorf("got %+v, want widgets in app, 1 object, held for app/operator", h)
	}
	var b bytes.Buffer
	if err := RenderTable(&b, doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "HELD IN NAMESPACE") || !strings.Contains(b.String(), "example.com/v1/widgets") {
		t.Errorf("table:\n%s\nwant a HELD IN NAMESPACE block naming the widgets", b.String())
	}
}

// The /readyz note says scope, owners, sync identity and freshness, or
// why a holding is not synced.
func TestHoldingLine(t *testing.T) {
	age := 12.0
	held := forpods.NamespacedHolding{Held: true, ServiceAccounts: []string{"app/operator"}, SyncIdentity: "app/operator-a", Objects: 3}
	for _, tc := range []struct {
		name string
		h    HoldingStatus
		want []string
	}{
		{"held and fresh", HoldingStatus{NamespacedHolding: held, StalenessSeconds: &age},
			[]string{"scope namespace", "held for app/operator", "syncing as pod app/operator-a", "3 objects", "12s ago"}},
		{"held, never heard", HoldingStatus{NamespacedHolding: held}, []string{"not heard from the cloud yet"}},
		{"stopped", HoldingStatus{NamespacedHolding: forpods.NamespacedHolding{Stopped: "over a cap"}},
			[]string{"stopped (over a cap)", "read through the cloud"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := holdingLine(tc.h)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("got %q, want it to contain %q", got, w)
				}
			}
		})
	}
}
