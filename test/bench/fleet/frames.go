//go:build e2e

package fleet

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
)

// frameLogTime is the layout of the standard logger's time stamp that
// golang.org/x/net/http2 logs each frame with under GODEBUG=http2debug=2.
const frameLogTime = "2006/01/02 15:04:05"

// frameLine is one frame a connection's framer read or wrote.
var frameLine = regexp.MustCompile(`^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d) http2: Framer (0x[0-9a-f]+): (wrote|read) ([A-Z_]+)(?: flags=(\S+))?`)

// clientPreface marks a client connection's first frame: the HTTP/2
// client's SETTINGS (a server sends no ENABLE_PUSH).
const clientPreface = "ENABLE_PUSH=0"

// frameCounts are the frames of a side's client connections by direction
// and type ("read PING"), over a window of minutes.
type frameCounts struct {
	n       map[string]int
	minutes float64
}

// countClientFrames counts the frames of the HTTP/2 client connections
// whose first frame was logged at or after opened, those logged within
// [from, to). Framers are told apart by address, which a new connection
// may reuse once an old one is gone; its preface starts it anew.
func countClientFrames(r io.Reader, opened, from, to time.Time) (frameCounts, error) {
	c := frameCounts{n: map[string]int{}, minutes: to.Sub(from).Minutes()}
	ours := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		m := frameLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		at, err := time.ParseInLocation(frameLogTime, m[1], time.Local)
		if err != nil {
			return c, fmt.Errorf("frame log time %q: %w", m[1], err)
		}
		framer, key := m[2], m[3]+" "+m[4]
		if key == "wrote SETTINGS" && strings.Contains(sc.Text(), clientPreface) {
			ours[framer] = !at.Before(opened)
		}
		if !ours[framer] || at.Before(from) || !at.Before(to) {
			continue
		}
		if strings.Contains(m[5], "ACK") {
			key += " ACK"
		}
		c.n[key]++
	}
	return c, sc.Err()
}

// frameKinds are the rows of the frame report, in order.
var frameKinds = []string{"HEADERS", "DATA", "WINDOW_UPDATE", "PING", "PING ACK", "RST_STREAM", "SETTINGS", "SETTINGS ACK", "GOAWAY"}

// frameTable is the report's table: each side's frames a minute by
// direction and type, seen from its client; cols name the sides.
func frameTable(cols []string, sides []frameCounts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| frames a minute, per node, as the client counts them | %s |\n|---%s\n",
		strings.Join(cols, " | "), strings.Repeat("|---", len(cols))+"|")
	for _, dir := range []string{"wrote", "read"} {
		for _, kind := range frameKinds {
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
