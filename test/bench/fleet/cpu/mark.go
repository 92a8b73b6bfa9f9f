//go:build e2e

package cpu

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/bench"
)

// Mark is the CPU time each part of the machine had used at one moment
// of a fleet-wide daemon restart.
type Mark struct {
	At time.Time
	// Daemons are every apiserver-lite's, old and new, since the
	// restart's first mark; API, Etcd and Bench are kube-apiserver's,
	// etcd's and this benchmark process's totals.
	Daemons, API, Etcd, Bench time.Duration
	// Busy and All are the whole machine's busy and total CPU time, from
	// /proc/stat.
	Busy, All time.Duration
}

// Shares are the cores each part of the machine used between two marks.
type Shares struct {
	Elapsed                   time.Duration
	Daemons, API, Etcd, Bench float64
	// Others is the machine's busy cores not used by the parts above
	// (other processes of this machine); Cores the machine's capacity.
	Others, Busy, Cores float64
}

// Between is the cores each part used from a to b.
func Between(a, b Mark) Shares {
	el := b.At.Sub(a.At)
	if el <= 0 {
		return Shares{}
	}
	per := func(x, y time.Duration) float64 { return (y - x).Seconds() / el.Seconds() }
	s := Shares{Elapsed: el, Daemons: per(a.Daemons, b.Daemons), API: per(a.API, b.API), Etcd: per(a.Etcd, b.Etcd),
		Bench: per(a.Bench, b.Bench), Busy: per(a.Busy, b.Busy), Cores: per(a.All, b.All)}
	s.Others = max(0, s.Busy-s.Daemons-s.API-s.Etcd-s.Bench)
	return s
}

// ReadMachine reads the whole machine's busy and total CPU time.
func ReadMachine() (busy, all time.Duration, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("read /proc/stat: %w", err)
	}
	return parseMachine(data)
}

// parseMachine reads the first "cpu" line of /proc/stat: user, nice,
// system, idle, iowait, irq, softirq and steal ticks; idle and iowait are
// not busy. (guest time is already in user.)
func parseMachine(data []byte) (busy, all time.Duration, err error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "cpu" {
			continue
		}
		const idle, iowait, counted = 4, 5, 8
		if len(fields) <= counted {
			return 0, 0, fmt.Errorf("/proc/stat: %d fields on the cpu line, want %d", len(fields), counted+1)
		}
		var b, a int64
		for i := 1; i <= counted; i++ {
			n, err := strconv.ParseInt(fields[i], 10, 64)
			if err != nil || n < 0 {
				return 0, 0, fmt.Errorf("/proc/stat: field %d %q: not a tick count", i, fields[i])
			}
			a += n
			if i != idle && i != iowait {
				b += n
			}
		}
		tick := time.Second / bench.ClockTicks
		return time.Duration(b) * tick, time.Duration(a) * tick, nil
	}
	return 0, 0, fmt.Errorf("/proc/stat: no cpu line")
}
