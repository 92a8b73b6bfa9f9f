//go:build e2e

package frames

import (
	"strings"
	"testing"
	"time"
)

// frameLog is a client's frame log: an old connection (0xa) opened before
// the side, a new one (0xb) with a PING and its answer, a server's framer
// (0xc), and a frame of 0xb outside the window.
const frameLog = `2026/11/27 08:00:00 http2: Framer 0xa: wrote SETTINGS len=24, settings: ENABLE_PUSH=0, INITIAL_WINDOW_SIZE=4194304
2026/11/27 08:01:00 http2: Framer 0xb: wrote SETTINGS len=24, settings: ENABLE_PUSH=0, INITIAL_WINDOW_SIZE=4194304
2026/11/27 08:01:00 http2: Framer 0xc: wrote SETTINGS len=30, settings: MAX_FRAME_SIZE=1048576
2026/11/27 08:02:00 http2: Framer 0xa: wrote HEADERS flags=END_HEADERS stream=7 len=40
2026/11/27 08:02:00 http2: Framer 0xb: wrote HEADERS flags=END_HEADERS stream=1 len=40
2026/11/27 08:02:00 http2: Transport encoding header ":path" = "/api/v1/pods"
2026/11/27 08:02:01 http2: Framer 0xb: read DATA flags=END_STREAM stream=1 len=10 data="{}"
2026/11/27 08:02:02 http2: Framer 0xb: wrote PING len=8 ping="\x00"
2026/11/27 08:02:02 http2: Framer 0xb: read PING flags=ACK len=8 ping="\x00"
2026/11/27 08:02:03 http2: Framer 0xc: read HEADERS flags=END_HEADERS stream=1 len=40
2026/11/27 08:04:00 http2: Framer 0xb: wrote PING len=8 ping="\x00"
`

func TestCountClientFrames(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.ParseInLocation(logTime, s, time.Local)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	c, err := Count(strings.NewReader(frameLog), at("2026/11/27 08:01:00"), at("2026/11/27 08:02:00"), at("2026/11/27 08:04:00"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"wrote HEADERS": 1, "read DATA": 1, "wrote PING": 1, "read PING ACK": 1}
	if len(c.n) != len(want) {
		t.Errorf("frames: got %v, want %v", c.n, want)
	}
	for k, v := range want {
		if c.n[k] != v {
			t.Errorf("%s: got %d, want %d (all: %v)", k, c.n[k], v, c.n)
		}
	}
	if c.minutes != 2 {
		t.Errorf("minutes: got %v, want 2", c.minutes)
	}
	table := Table([]string{"side"}, []Counts{c})
	for _, row := range []string{"| wrote PING | 0.5 |", "| read PING ACK | 0.5 |", "| all | 2.0 |"} {
		if !strings.Contains(table, row) {
			t.Errorf("table lacks %q:\n%s", row, table)
		}
	}
}

// FuzzCountClientFrames: any log is counted without a panic.
func FuzzCountClientFrames(f *testing.F) {
	f.Add(frameLog)
	f.Fuzz(func(t *testing.T, s string) {
		from := time.Date(2026, 11, 27, 8, 0, 0, 0, time.Local)
		if _, err := Count(strings.NewReader(s), from, from, from.Add(time.Hour)); err != nil && !strings.Contains(err.Error(), "frame log time") && !strings.Contains(err.Error(), "token too long") {
			t.Fatalf("unexpected error: %v", err)
		}
	})
}
