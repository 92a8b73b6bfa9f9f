//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// Timing of localWatcher.
const (
	// localWatchTimeoutSeconds is the timeoutSeconds of each local watch:
	// longer than the test, so the edge never ends a stream on its own.
	localWatchTimeoutSeconds = 900
	// rewatchDelay spaces re-opens after a stream ended or failed to open.
	rewatchDelay = 500 * time.Millisecond
	// eventPollInterval is how often waitEvent looks at what arrived.
	eventPollInterval = 100 * time.Millisecond
)

// seenEvent is one watch event a localWatcher received.
type seenEvent struct {
	typ  watch.EventType
	name string
	rv   string
	at   time.Time
}

// localWatcher watches configmaps of one namespace through the edge from a
// given resourceVersion. When a stream ends it re-watches from the last
// resourceVersion it saw, as client-go's reflector does; it never relists.
// Safe for concurrent use.
type localWatcher struct {
	opened chan struct{} // closed after the first successful open

	mu sync.Mutex
	// events are the ADDED, MODIFIED and DELETED events in arrival order.
	// Guarded by mu.
	events []seenEvent
	// problems are ERROR events and failed (re)opens. Guarded by mu.
	problems []string
	// opens counts successful watch requests. Guarded by mu.
	opens int
	// lastRV is the resourceVersion to re-watch from. Guarded by mu.
	lastRV string
}

// startLocalWatch watches configmaps in ns from rv until ctx ends.
func startLocalWatch(ctx context.Context, client kubernetes.Interface, ns, rv string) *localWatcher {
	w := &localWatcher{opened: make(chan struct{}), lastRV: rv}
	go w.run(ctx, client, ns)
	return w
}

func (w *localWatcher) run(ctx context.Context, client kubernetes.Interface, ns string) {
	timeout := int64(localWatchTimeoutSeconds)
	for ctx.Err() == nil {
		w.mu.Lock()
		opts := metav1.ListOptions{ResourceVersion: w.lastRV, AllowWatchBookmarks: true, TimeoutSeconds: &timeout}
		w.mu.Unlock()
		stream, err := client.CoreV1().ConfigMaps(ns).Watch(ctx, opts)
		if err != nil {
			if ctx.Err() == nil {
				w.problem("open watch at resourceVersion %s: %v", opts.ResourceVersion, err)
			}
		} else {
			w.mu.Lock()
			if w.opens++; w.opens == 1 {
				close(w.opened)
			}
			w.mu.Unlock()
			w.consume(ctx, stream)
		}
		select {
		case <-ctx.Done():
		case <-time.After(rewatchDelay):
		}
	}
}

// consume records the events of one stream until it ends.
func (w *localWatcher) consume(ctx context.Context, stream watch.Interface) {
	defer stream.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-stream.ResultChan():
			if !ok {
				return
			}
			w.record(ev)
		}
	}
}

func (w *localWatcher) record(ev watch.Event) {
	if ev.Type == watch.Error {
		w.problem("ERROR event: %v", ev.Object)
		return
	}
	m, err := meta.Accessor(ev.Object)
	if err != nil {
		w.problem("%s event without metadata: %v", ev.Type, err)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lastRV = m.GetResourceVersion()
	if ev.Type != watch.Bookmark {
		w.events = append(w.events, seenEvent{typ: ev.Type, name: m.GetName(), rv: m.GetResourceVersion(), at: time.Now()})
	}
}

func (w *localWatcher) problem(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.problems = append(w.problems, fmt.Sprintf(format, args...))
}

// Problems returns the ERROR events and failed opens so far.
func (w *localWatcher) Problems() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.problems...)
}

// Opens returns how many watch requests succeeded.
func (w *localWatcher) Opens() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.opens
}

// Events returns the events received so far.
func (w *localWatcher) Events() []seenEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]seenEvent(nil), w.events...)
}

// waitEvent waits until an event of typ for name arrived, with resource
// version rv unless rv is empty, and returns it; it fails after timeout.
func (w *localWatcher) waitEvent(ctx context.Context, typ watch.EventType, name, rv string, timeout time.Duration) (seenEvent, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		for _, ev := range w.Events() {
			if ev.typ == typ && ev.name == name && (rv == "" || ev.rv == rv) {
				return ev, nil
			}
		}
		select {
		case <-ctx.Done():
			return seenEvent{}, fmt.Errorf("no %s event for %s (resourceVersion %q) within %s; got %s",
				typ, name, rv, timeout, describeEvents(w.Events()))
		case <-time.After(eventPollInterval):
		}
	}
}

// checkIncreasing returns an error unless event resourceVersions strictly
// increase.
func checkIncreasing(events []seenEvent) error {
	var last uint64
	for _, ev := range events {
		rv, err := strconv.ParseUint(ev.rv, 10, 64)
		if err != nil {
			return fmt.Errorf("event %s %s: resourceVersion %q: %w", ev.typ, ev.name, ev.rv, err)
		}
		if rv <= last {
			return fmt.Errorf("resourceVersions do not increase: %s", describeEvents(events))
		}
		last = rv
	}
	return nil
}

func describeEvents(events []seenEvent) string {
	parts := make([]string, 0, len(events))
	for _, ev := range events {
		parts = append(parts, fmt.Sprintf("%s %s@%s", ev.typ, ev.name, ev.rv))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
