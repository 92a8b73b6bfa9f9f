package printers

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// FuzzRows feeds arbitrary bytes to every printer: each must return cells
// or an error, never panic, and give one cell per column.
func FuzzRows(f *testing.F) {
	for _, seed := range []string{
		`{"metadata":{"name":"a","creationTimestamp":"2026-01-01T00:00:00Z"}}`,
		`{"spec":{"type":"LoadBalancer","ports":[{"port":80}]},"status":{"loadBalancer":{"ingress":[{"hostname":"h"}]}}}`,
		`{"subsets":[{"addresses":[{"ip":"1.2.3.4"}]}],"series":{"count":2}}`,
		`{"endpoints":[{"addresses":["a","b","c","d"]}],"ports":[{}]}`,
		`null`, `[]`, `{"metadata":7}`,
	} {
		f.Add([]byte(seed))
	}
	grs := []schema.GroupResource{{Group: "example.com", Resource: "widgets"}}
	for gr := range printers {
		grs = append(grs, gr)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, gr := range grs {
			p := For(gr)
			cells, _, err := p.Row(raw, tableNow)
			if err == nil && len(cells) != len(p.Columns) {
				t.Errorf("%s: got %d cells, want %d", gr, len(cells), len(p.Columns))
			}
		}
	})
}
