//go:build e2e

package conformance

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// diffs are the differences found, per aspect.
type diffs map[aspect][]string

func (d diffs) add(a aspect, format string, args ...any) {
	d[a] = append(d[a], fmt.Sprintf(format, args...))
}

// compareAnswers compares two normalized answers aspect by aspect.
func compareAnswers(cloud, edge answer) diffs {
	d := diffs{}
	if cloud.code != edge.code || cloud.reason != edge.reason ||
		!slices.Equal(cloud.causes, edge.causes) || cloud.details != edge.details {
		d.add(aspectStatus, "cloud %d %s %v %s, edge %d %s %v %s",
			cloud.code, cloud.reason, cloud.causes, cloud.details, edge.code, edge.reason, edge.causes, edge.details)
	}
	if cloud.code != edge.code {
		return d // the bodies answer different questions
	}
	if cloud.mediaType != edge.mediaType {
		d.add(aspectMediaType, "cloud %s, edge %s", cloud.mediaType, edge.mediaType)
	}
	compareBodies(d, cloud, edge)
	return d
}

// compareBodies compares kinds, list metadata and every object in full.
func compareBodies(d diffs, cloud, edge answer) {
	if cloud.kind != edge.kind {
		d.add(aspectBody, "kind: cloud %q, edge %q", cloud.kind, edge.kind)
		return
	}
	if cloud.kind == "Status" {
		return
	}
	if !reflect.DeepEqual(cloud.body, edge.body) {
		d.add(aspectBody, "body: cloud %s, edge %s", short(cloud.body), short(edge.body))
	}
	if len(cloud.items) != len(edge.items) {
		d.add(aspectBody, "items: cloud %v, edge %v", identities(cloud.items), identities(edge.items))
		return
	}
	for i := range cloud.items {
		if !reflect.DeepEqual(cloud.items[i], edge.items[i]) {
			d.add(aspectBody, "item %d: cloud %s, edge %s", i, short(cloud.items[i]), short(edge.items[i]))
		}
	}
}

// identities lists namespace/name@rv of items.
func identities(items []map[string]any) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, fmt.Sprintf("%s/%s@%s", str(it, "metadata", "namespace"), str(it, "metadata", "name"),
			str(it, "metadata", "resourceVersion")))
	}
	return out
}

// maxShown bounds how much of an object a difference message shows.
const maxShown = 600

func short(v any) string {
	s := fmt.Sprintf("%v", v)
	if len(s) > maxShown {
		return s[:maxShown] + "..."
	}
	return s
}

// verdict applies the row's rule: without knownDifference nothing may
// differ; with it, differsIn must still differ and nothing else may.
func verdict(t *testing.T, r row, d diffs) {
	t.Helper()
	for a, msgs := range d {
		for _, m := range msgs {
			if a == r.differsIn && r.knownDifference != "" {
				t.Logf("known difference in %s (%s): %s", a, r.knownDifference, m)
				continue
			}
			t.Errorf("%s differs: %s", a, m)
		}
	}
	if r.knownDifference != "" && len(d[r.differsIn]) == 0 {
		t.Errorf("known difference in %s no longer differs: the feature landed; remove knownDifference from row %q and regenerate docs/compatibility/conformance.md",
			r.differsIn, r.name)
	}
}
