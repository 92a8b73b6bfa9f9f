//go:build e2e

package lease

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"time"
)

// listed is how many kept failures of each phase and side the report
// lists one by one.
const listed = 5

// WriteCauses writes, when a renewal failed in phase p, the failures by
// cause and the first few with their node, step and time; side names the
// side s counts.
func (s *Failures) WriteCauses(b *bytes.Buffer, p Phase, side string) {
	n := s.In(p)
	if n == 0 {
		return
	}
	fs := s.keptIn(p)
	fmt.Fprintf(b, "Failed Lease renewals, %s, %s side: %d (%d kept with their error):\n\n", p, side, n, len(fs))
	causes := countCauses(fs)
	for _, c := range slices.Sorted(maps.Keys(causes)) {
		fmt.Fprintf(b, "- %d × `%s`\n", causes[c], c)
	}
	for _, f := range fs[:min(len(fs), listed)] {
		fmt.Fprintf(b, "- %s, %s into the phase (step %q): `%s`\n", f.node, f.since.Round(time.Millisecond), f.step, f.cause)
	}
	b.WriteString("\n")
}

// countCauses counts failures by cause.
func countCauses(fs []failure) map[string]int {
	out := map[string]int{}
	for _, f := range fs {
		out[f.cause]++
	}
	return out
}
