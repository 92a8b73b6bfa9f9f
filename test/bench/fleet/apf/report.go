//go:build e2e

package apf

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
)

// Write writes the levels that moved over a fleet-wide daemon restart's
// window, those named in createLevels (the change's creates') marked.
func Write(b *bytes.Buffer, moved Levels, createLevels []string) {
	b.WriteString("| API Priority and Fairness level, first SIGTERM → every node serving the change | dispatched | rejected (429) | waited for a seat | their mean wait |\n| --- | --- | --- | --- | --- |\n")
	for _, name := range slices.Sorted(maps.Keys(moved)) {
		l, label := moved[name], "`"+name+"`"
		if slices.Contains(createLevels, name) {
			label += " (the change's creates)"
		}
		mean := "–"
		if l.Waited > 0 {
			mean = fmt.Sprintf("%.3f s", l.WaitSum/l.Waited)
		}
		fmt.Fprintf(b, "| %s | %.0f | %.0f | %.0f | %s |\n", label, l.Dispatched, l.Rejected, l.Waited, mean)
	}
	b.WriteString("\n")
}
