package metastore

import (
	"io"
	"log/slog"

	"k8s.io/utils/clock"
)

// DefaultEventLogSize is the number of events kept per resource when
// Options.EventLogSize is not set; it matches the local API's default
// watch cache size.
const DefaultEventLogSize = 1000

// Options configure a Store. The zero value is valid.
type Options struct {
	// EventLogSize is how many of its latest events the event log keeps
	// per resource: the local watch cache size, so that a restarted
	// daemon serves the same watch window. 0 means DefaultEventLogSize.
	EventLogSize int
	// Logger receives lines about moved-aside databases and skipped rows;
	// nil discards them.
	Logger *slog.Logger
	// Clock dates moved-aside databases; nil means the real clock.
	Clock clock.PassiveClock
	// Sealing encrypts Secrets and stored tokens at rest; the zero value
	// stores everything in plaintext.
	Sealing Sealing
}

// withDefaults returns o with every unset field filled in.
func (o Options) withDefaults() Options {
	if o.EventLogSize <= 0 {
		o.EventLogSize = DefaultEventLogSize
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return o
}
