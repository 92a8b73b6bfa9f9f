package startup

import (
	"log/slog"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// Restored events share every object version the state or an earlier
// event holds, decode the rest, and an undecodable event drops itself and
// the events before it, whether or not their decoding was made ahead.
func TestDecodeEventsSharesVersions(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	v := func(name string, rv uint64, data string) metastore.Object {
		return storedObject(mustObject(t, cm("a", name, rv, data)))
	}
	a1, a2, b1, a3 := v("a", 1, "1"), v("a", 2, "2"), v("b", 3, "1"), v("a", 4, "3")
	state := decodeObjects([]metastore.Object{a3, b1}, quiet)
	log := []metastore.Event{
		{Type: metastore.Modified, Object: a2, Prev: a1.Raw},
		{Type: metastore.Added, Object: b1},
		{Type: metastore.Modified, Object: a3, Prev: a2.Raw},
	}
	events, floor := decodeEvents(log, 0, state, quiet)
	if len(events) != 3 || floor != 0 {
		t.Fatalf("got %d events, floor %d, want 3, 0", len(events), floor)
	}
	for _, tc := range []struct {
		name      string
		got, want *versioncache.Object
	}{
		{"a's second event's previous state is its first event's object", events[2].Prev, events[0].Object},
		{"a's last event is the state's object", events[2].Object, state[0]},
		{"b's event is the state's object", events[1].Object, state[1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got a separate copy (%p), want the shared object (%p)", tc.got, tc.want)
			}
		})
	}
	if events[0].Prev == nil || events[0].Prev.RV != 1 {
		t.Errorf("a's first previous state: got %v, want a decoded RV 1", events[0].Prev)
	}

	bad := log[1]
	bad.Object.Raw = []byte("{not json")
	events, floor = decodeEvents([]metastore.Event{log[0], bad, log[2]}, 0, state, quiet)
	if len(events) != 1 || floor != b1.RV || events[0].Object != state[0] {
		t.Errorf("with an undecodable event: got %d events, floor %d, want a's last event alone above floor %d", len(events), floor, b1.RV)
	}
}
