package startup

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

// The node name is stored on a first start and when it changes.
func TestRecordNodeName(t *testing.T) {
	for _, tc := range []struct{ name, stored, node string }{
		{"first start", "", "n1"},
		{"same node", "n1", "n1"},
		{"renamed node", "n1", "n2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st, err := metastore.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if tc.stored != "" {
				if err := st.PutMeta(ctx, metastore.NodeNameKey, []byte(tc.stored)); err != nil {
					t.Fatal(err)
				}
			}
			if err := recordNodeName(ctx, st, tc.node); err != nil {
				t.Fatalf("recordNodeName: %v", err)
			}
			if got, err := st.GetMeta(ctx, metastore.NodeNameKey); err != nil || string(got) != tc.node {
				t.Errorf("stored node name: got %q, %v, want %q", got, err, tc.node)
			}
		})
	}
}
