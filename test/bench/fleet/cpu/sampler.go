//go:build e2e

package cpu

import (
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/bench"
)

// SampleEvery is how often kube-apiserver's CPU is read while a restart
// is measured; its peak is the most CPU used in one such interval.
const SampleEvery = time.Second

// Sampler reads a process's CPU every SampleEvery until stopped, and
// keeps the most used in one interval.
type Sampler struct {
	stopCh chan struct{}
	done   chan struct{}
	// peak is the most CPU seconds per second of one interval, and series
	// every interval's in order; written by the sampling goroutine, read
	// after done is closed.
	peak   float64
	series []float64
}

// Sample starts sampling process pid's CPU (kube-apiserver's). It stops
// early, keeping what it has, once the process cannot be read.
func Sample(pid int) *Sampler {
	s := &Sampler{stopCh: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		prev, err := bench.ReadCPU(pid)
		last := time.Now()
		t := time.NewTicker(SampleEvery)
		defer t.Stop()
		for err == nil {
			select {
			case <-s.stopCh:
				return
			case <-t.C:
			}
			var cur time.Duration
			if cur, err = bench.ReadCPU(pid); err != nil {
				return
			}
			now := time.Now()
			cores := (cur - prev).Seconds() / now.Sub(last).Seconds()
			s.peak, s.series = max(s.peak, cores), append(s.series, cores)
			prev, last = cur, now
		}
	}()
	return s
}

// Stop ends the sampling and returns the peak, in cores.
func (s *Sampler) Stop() float64 {
	close(s.stopCh)
	<-s.done
	return s.peak
}

// Seconds is every interval's cores, in order; after Stop.
func (s *Sampler) Seconds() []float64 {
	<-s.done
	return s.series
}
