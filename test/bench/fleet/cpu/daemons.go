//go:build e2e

package cpu

import (
	"fmt"
	"syscall"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/bench"
)

// rusageRetries bounds the re-reads of the reaped children's CPU when a
// daemon was reaped while the daemons' CPU was being read.
const rusageRetries = 5

// Daemons follows every apiserver-lite's CPU across their restart: an
// old daemon's time is read from /proc while it has not been reaped, and
// from this process's reaped children's total once it has.
type Daemons struct {
	pids func() []int // the daemons' current PIDs (0: none)
	// old are the PIDs at the first mark and their CPU time then;
	// children the reaped children's CPU time then.
	old      []int
	oldCPU   []time.Duration
	children time.Duration
}

// NewDaemons marks the daemons' CPU before their restart; pids gives
// their current PIDs, in the same order every time.
func NewDaemons(pids func() []int) (*Daemons, error) {
	d := &Daemons{pids: pids, old: pids()}
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

// Used is the CPU time every daemon, old and new, used since the first
// mark.
func (d *Daemons) Used() (time.Duration, error) {
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
