//go:build e2e

package fleet

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// rusageRetries bounds the re-reads of the reaped children's CPU when a
// daemon was reaped while the daemons' CPU was being read.
const rusageRetries = 5

// cpuMark is the CPU time each part of the machine had used at one moment
// of a fleet-wide daemon restart.
type cpuMark struct {
	at time.Time
	// daemons are every apiserver-lite's, old and new, since the restart's
	// first mark; api, etcd and bench are kube-apiserver's, etcd's and
	// this benchmark process's totals.
	daemons, api, etcd, bench time.Duration
	// busy and all are the whole machine's busy and total CPU time, from
	// /proc/stat.
	busy, all time.Duration
}

// cpuShares are the cores each part of the machine used between two
// marks.
type cpuShares struct {
	elapsed                   time.Duration
	daemons, api, etcd, bench float64
	// others is the machine's busy cores not used by the parts above
	// (other processes of this machine); cores the machine's capacity.
	others, busy, cores float64
}

// sharesBetween is the cores each part used from a to b.
func sharesBetween(a, b cpuMark) cpuShares {
	el := b.at.Sub(a.at)
	if el <= 0 {
		return cpuShares{}
	}
	per := func(x, y time.Duration) float64 { return (y - x).Seconds() / el.Seconds() }
	s := cpuShares{elapsed: el, daemons: per(a.daemons, b.daemons), api: per(a.api, b.api), etcd: per(a.etcd, b.etcd),
		bench: per(a.bench, b.bench), busy: per(a.busy, b.busy), cores: per(a.all, b.all)}
	s.others = max(0, s.busy-s.daemons-s.api-s.etcd-s.bench)
	return s
}

// daemonCPU follows every apiserver-lite's CPU across their restart: an
// old daemon's time is read from /proc while it has not been reaped, and
// from this process's reaped children's total once it has.
type daemonCPU struct {
	pids func() []int // the daemons' current PIDs (0: none)
	// old are the PIDs at the first mark and their CPU time then;
	// children the reaped children's CPU time then.
	old      []int
	oldCPU   []time.Duration
	children time.Duration
}

// newDaemonCPU marks the daemons' CPU before their restart.
func newDaemonCPU(pids func() []int) (*daemonCPU, error) {
	d := &daemonCPU{pids: pids, old: pids()}
	var err error
	if d.children, err = childrenCPU(); err != nil {
		return nil, err
	}
	for _, pid := range d.old {
		c, err := bench.ReadCPU(pid)
		if err != nil {
			return nil, err
		}
		d.oldCPU = append(d.oldCPU, c)
	}
	return d, nil
}

// used is the CPU time every daemon, old and new, used since the first
// mark.
func (d *daemonCPU) used() (time.Duration, error) {
	for range rusageRetries {
		before, err := childrenCPU()
		if err != nil {
			return 0, err
		}
		sum := before - d.children
		now := d.pids()
		for i, pid := range d.old {
			if c, err := bench.ReadCPU(pid); err == nil {
				sum += c - d.oldCPU[i] // not reaped yet
			} else {
				sum -= d.oldCPU[i] // reaped: its whole time is in the children's
			}
			if i < len(now) && now[i] != 0 && now[i] != pid {
				if c, err := bench.ReadCPU(now[i]); err == nil {
					sum += c
				}
			}
		}
		if after, err := childrenCPU(); err == nil && after == before {
			return sum, nil
		}
	}
	return 0, fmt.Errorf("daemons' CPU: children reaped during each of %d reads", rusageRetries)
}

// childrenCPU is the user and system CPU time of this process's reaped
// children.
func childrenCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0, fmt.Errorf("rusage of children: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// readMachineCPU reads the whole machine's busy and total CPU time.
func readMachineCPU() (busy, all time.Duration, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("read /proc/stat: %w", err)
	}
	return parseMachineCPU(data)
}

// parseMachineCPU reads the first "cpu" line of /proc/stat: user, nice,
// system, idle, iowait, irq, softirq and steal ticks; idle and iowait are
// not busy. (guest time is already in user.)
func parseMachineCPU(data []byte) (busy, all time.Duration, err error) {
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
