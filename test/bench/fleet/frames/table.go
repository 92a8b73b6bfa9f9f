//go:build e2e

package frames

import (
	"fmt"
	"strings"
)

// kinds are the rows of the frame report, in order.
var kinds = []string{"HEADERS", "DATA", "WINDOW_UPDATE", "PING", "PING ACK", "RST_STREAM", "SETTINGS", "SETTINGS ACK", "GOAWAY"}

// Table is the report's table: each side's frames a minute by direction
// and type, seen from its client; cols name the sides.
func Table(cols []string, sides []Counts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| frames a minute, per node, as the client counts them | %s |\n|---%s\n",
		strings.Join(cols, " | "), strings.Repeat("|---", len(cols))+"|")
	for _, dir := range []string{"wrote", "read"} {
		for _, kind := range kinds {
			row := make([]string, len(sides))
			for i, s := range sides {
				row[i] = fmt.Sprintf("%.1f", float64(s.n[dir+" "+kind])/s.minutes)
			}
			fmt.Fprintf(&b, "| %s %s | %s |\n", dir, kind, strings.Join(row, " | "))
		}
	}
	total := make([]string, len(sides))
	for i, s := range sides {
		sum := 0
		for _, n := range s.n {
			sum += n
		}
		total[i] = fmt.Sprintf("%.1f", float64(sum)/s.minutes)
	}
	fmt.Fprintf(&b, "| all | %s |\n", strings.Join(total, " | "))
	return b.String()
}
