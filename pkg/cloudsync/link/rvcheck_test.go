package link

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rvSource counts readings and answers each with the cloud's next
// resourceVersion once release is closed.
type rvSource struct {
	reads   atomic.Int32
	release chan struct{}
	err     error
}

func (s *rvSource) read(ctx context.Context) (uint64, error) {
	n := s.reads.Add(1)
	select {
	case <-s.release:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return 100 + uint64(n), s.err
}

func waitReads(t *testing.T, s *rvSource, want int32) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for s.reads.Load() < want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := s.reads.Load(); got != want {
		t.Fatalf("readings begun: got %d, want %d", got, want)
	}
}

func TestCloudRVSharesReadingsBegunAfterTheTicket(t *testing.T) {
	ctx := context.Background()
	t.Run("callers due together share one reading", func(t *testing.T) {
		l, s := New(Config{}), &rvSource{release: make(chan struct{})}
		ticket := l.RVTicket()
		var wg sync.WaitGroup
		got := make([]uint64, 5)
		for i := range got {
			wg.Go(func() { got[i], _ = l.CloudRV(ctx, ticket, s.read) })
		}
		waitReads(t, s, 1)
		close(s.release)
		wg.Wait()
		for i, rv := range got {
			if rv != 101 {
				t.Errorf("caller %d: got rv %d, want 101", i, rv)
			}
		}
		if rv, _ := l.CloudRV(ctx, ticket, s.read); rv != 101 || s.reads.Load() != 1 {
			t.Errorf("later caller of the same ticket: got rv %d after %d readings, want 101 after 1", rv, s.reads.Load())
		}
	})
	t.Run("a reading done before the ticket is not reused", func(t *testing.T) {
		l, s := New(Config{}), &rvSource{release: make(chan struct{})}
		close(s.release)
		if _, err := l.CloudRV(ctx, l.RVTicket(), s.read); err != nil {
			t.Fatal(err)
		}
		if rv, _ := l.CloudRV(ctx, l.RVTicket(), s.read); rv != 102 {
			t.Errorf("got rv %d, want 102 from a second reading", rv)
		}
	})
	t.Run("a reading in flight before the ticket is not joined", func(t *testing.T) {
		l, s := New(Config{}), &rvSource{release: make(chan struct{})}
		first := make(chan uint64)
		go func() { rv, _ := l.CloudRV(ctx, l.RVTicket(), s.read); first <- rv }()
		waitReads(t, s, 1)
		second := make(chan uint64)
		go func() { rv, _ := l.CloudRV(ctx, l.RVTicket(), s.read); second <- rv }()
		waitReads(t, s, 2)
		close(s.release)
		if a, b := <-first, <-second; a == b {
			t.Errorf("got rv %d for both, want two readings", a)
		}
	})
	t.Run("a failed reading is not kept", func(t *testing.T) {
		l, s := New(Config{}), &rvSource{release: make(chan struct{}), err: errors.New("429")}
		close(s.release)
		ticket := l.RVTicket()
		if _, err := l.CloudRV(ctx, ticket, s.read); err == nil {
			t.Fatal("got no error, want the reading's")
		}
		s.err = nil
		if rv, err := l.CloudRV(ctx, ticket, s.read); err != nil || rv != 102 {
			t.Errorf("got rv %d, err %v; want 102 from a new reading", rv, err)
		}
	})
}
