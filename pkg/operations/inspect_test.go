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
	"github.com/apiserver-lite/apiserver-lite/pkg/offline"
)

// inspect and its table name the service accounts a resource is held for.
func TestInspectNamesHoldingsForPods(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	store, err := metastore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	const held, node = "discovery.k8s.io/v1/endpointslices?forPods=true", "/v1/services"
	for _, key := range []string{held, node} {
		if err := store.Apply(ctx, key, nil, 7); err != nil {
			t.Fatal(err)
		}
	}
	owners := `{"owners":[{"namespace":"kube-system","name":"kube-proxy-a","uid":"u1","serviceAccount":"kube-proxy"},` +
		`{"namespace":"kube-system","name":"coredns-a","uid":"u2","serviceAccount":"coredns"}]}`
	if err := store.PutMeta(ctx, forpods.OwnersKey(held), []byte(owners)); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	doc, err := InspectDataDir(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ResourceStatus{}
	for _, r := range doc.Resources {
		got[r.Key] = r
	}
	if r := got[held]; !r.ForPods || !slices.Equal(r.HeldFor, []string{"kube-system/coredns", "kube-system/kube-proxy"}) ||
		r.Scope != forpods.ScopeCluster || !slices.Equal(r.Owners, []string{"kube-system/coredns-a", "kube-system/kube-proxy-a"}) {
		t.Errorf("held resource: got %+v, want it held cluster-wide for coredns's and kube-proxy's pods", r)
	}
	if r := got[node]; r.ForPods || r.HeldFor != nil {
		t.Errorf("the node's resource: got %+v, want it held for no pod", r)
	}
	var b bytes.Buffer
	if err := RenderTable(&b, doc); err != nil {
		t.Fatal(err)
	}
	want := "endpointslices.discovery.k8s.io  cluster  kube-system/coredns,kube-system/kube-proxy  -"
	if !strings.Contains(b.String(), "HELD FOR PODS") || !strings.Contains(b.String(), want) {
		t.Errorf("table:\n%s\nwant a HELD FOR PODS block with %q", b.String(), want)
	}
}

// inspect counts the stored answers of each kind.
func TestInspectCountsStoredAnswers(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	store, err := metastore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for key, v := range map[string]string{offline.GetOnlyPrefix + "a": "12345", offline.GetOnlyPrefix + "b": "123",
		offline.DecisionPrefix + "x/y": "1", "sync-scope": "node"} {
		if err := store.PutMeta(ctx, key, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	doc, err := InspectDataDir(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]StoredAnswers{
		"get-only-answers":      {Kind: "get-only-answers", Prefix: offline.GetOnlyPrefix, Count: 2, Bytes: 8},
		"decisions":             {Kind: "decisions", Prefix: offline.DecisionPrefix, Count: 1, Bytes: 1},
		"token-reviews":         {Kind: "token-reviews", Prefix: offline.ReviewPrefix},
		"token-request-answers": {Kind: "token-request-answers", Prefix: offline.TokenRequestPrefix},
	}
	if len(doc.Stored) != len(want) {
		t.Fatalf("got %d kinds %+v, want %d", len(doc.Stored), doc.Stored, len(want))
	}
	for _, s := range doc.Stored {
		if s != want[s.Kind] {
			t.Errorf("got %+v, want %+v", s, want[s.Kind])
		}
	}
	var b bytes.Buffer
	if err := RenderTable(&b, doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "STORED ANSWERS") || !strings.Contains(b.String(), "get-only-answers       2      8") {
		t.Errorf("table:\n%s\nwant a STORED ANSWERS block with get-only-answers 2", b.String())
	}
}
