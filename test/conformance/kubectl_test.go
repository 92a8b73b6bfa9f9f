//go:build e2e

package conformance

import (
	"slices"
	"strings"
	"testing"
)

// runKubectl runs the row's kubectl command against both sides and
// compares the output: exactly for -o json and -o name, else the table's
// header and the first column of every row (AGE may tick between runs).
func (s *suite) runKubectl(t *testing.T, r row) {
	s.catchUp(t, r.resource)
	args := make([]string, len(r.kubectl))
	for i, a := range r.kubectl {
		args[i] = s.expand(r, a)
	}
	cloud, cerr := s.c.KubectlCloud(args...)
	edge, eerr := s.c.KubectlEdge(args...)
	if cerr != nil || eerr != nil {
		t.Fatalf("kubectl %v: cloud error %v, edge error %v", args, cerr, eerr)
	}
	t.Logf("kubectl %v\ncloud:\n%s\nedge:\n%s", args, cloud, edge)
	if strings.TrimSpace(cloud) == "" {
		t.Fatalf("cloud: kubectl %v printed nothing", args)
	}
	d := diffs{}
	if exactOutput(args) {
		if cloud != edge {
			d.add(aspectKubectl, "output differs:\ncloud:\n%s\nedge:\n%s", cloud, edge)
		}
	} else {
		ch, cn := tableShape(cloud)
		eh, en := tableShape(edge)
		if !slices.Equal(ch, eh) {
			d.add(aspectKubectl, "header: cloud %v, edge %v", ch, eh)
		}
		if !slices.Equal(cn, en) {
			d.add(aspectKubectl, "names: cloud %v, edge %v", cn, en)
		}
	}
	verdict(t, r, d)
}

// exactOutput reports whether the output format is machine-readable.
func exactOutput(args []string) bool {
	i := slices.Index(args, "-o")
	return i >= 0 && i+1 < len(args) && (args[i+1] == "json" || args[i+1] == "name")
}

// tableShape returns the header columns and the first column of each row.
func tableShape(out string) (header, names []string) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	header = strings.Fields(lines[0])
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return header, names
}
