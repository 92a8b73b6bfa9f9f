//go:build e2e

package frames

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"
)

// logTime is the layout of the standard logger's time stamp that
// golang.org/x/net/http2 logs each frame with under GODEBUG=http2debug=2.
const logTime = "2006/01/02 15:04:05"

// frameLine is one frame a connection's framer read or wrote.
var frameLine = regexp.MustCompile(`^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d) http2: Framer (0x[0-9a-f]+): (wrote|read) ([A-Z_]+)(?: flags=(\S+))?`)

// clientPreface marks a client connection's first frame: the HTTP/2
// client's SETTINGS (a server sends no ENABLE_PUSH).
const clientPreface = "ENABLE_PUSH=0"

// Counts are the frames of a side's client connections by direction and
// type ("read PING"), over a window of minutes.
type Counts struct {
	n       map[string]int
	minutes float64
}

// CountFile counts the client frames logged in path (see Count).
func CountFile(path string, opened, from, to time.Time) (Counts, error) {
	fh, err := os.Open(path)
	if err != nil {
		return Counts{}, err
	}
	defer fh.Close()
	return Count(fh, opened, from, to)
}

// Count counts the frames of the HTTP/2 client connections whose first
// frame was logged at or after opened, those logged within [from, to).
// Framers are told apart by address, which a new connection may reuse
// once an old one is gone; its preface starts it anew.
func Count(r io.Reader, opened, from, to time.Time) (Counts, error) {
	c := Counts{n: map[string]int{}, minutes: to.Sub(from).Minutes()}
	ours := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		m := frameLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		at, err := time.ParseInLocation(logTime, m[1], time.Local)
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
