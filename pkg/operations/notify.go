package operations

import (
	"context"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"k8s.io/utils/clock"
)

// sd_notify states (sd_notify(3)).
const (
	notifyReady    = daemon.SdNotifyReady    // the local API serves from disk
	notifyStopping = daemon.SdNotifyStopping // the ordered shutdown began
	notifyWatchdog = daemon.SdNotifyWatchdog // the daemon is not wedged
	notifyStatus   = "STATUS="               // prefix of a one-line status
)

// statusInterval is how often the STATUS= line is refreshed when no
// watchdog is configured: often enough for `systemctl status` to be
// current, rarely enough to cost nothing.
const statusInterval = 10 * time.Second

// Notifier speaks the sd_notify protocol to systemd: READY=1 once serving,
// WATCHDOG=1 only while alive says the daemon is not wedged, STATUS= lines
// with the sync state and STOPPING=1 at shutdown. Outside systemd
// (NOTIFY_SOCKET unset) every send is a no-op.
type Notifier struct {
	send  func(state string) error
	clock clock.WithTicker
	// watchdog is the interval between WATCHDOG=1 pings, half of systemd's
	// WatchdogSec=; 0 means no watchdog is configured.
	watchdog time.Duration
	// alive returns nil while the serving loop and the sync loops work.
	alive func(ctx context.Context) error
	// status describes the sync state in one line.
	status func() string
}

// NewNotifier reads systemd's environment (NOTIFY_SOCKET, WATCHDOG_USEC
// and WATCHDOG_PID) and returns a Notifier for it. alive says whether the daemon is
// wedged; status is the STATUS= line.
func NewNotifier(c clock.WithTicker, alive func(context.Context) error, status func() string) (*Notifier, error) {
	wd, err := daemon.SdWatchdogEnabled(false)
	if err != nil {
		return nil, err
	}
	send := func(state string) error {
		_, err := daemon.SdNotify(false, state)
		return err
	}
	return &Notifier{send: send, clock: c, watchdog: wd / 2, alive: alive, status: status}, nil
}

// Run sends READY=1 and then, until ctx ends, the watchdog pings and status
// lines; it sends STOPPING=1 when ctx ends. The caller starts Run once the
// local API serves.
func (n *Notifier) Run(ctx context.Context, log interface{ Warn(string, ...any) }) {
	last := n.status()
	if err := n.send(notifyReady + "\n" + notifyStatus + last); err != nil {
		log.Warn("sd_notify failed", "err", err)
	}
	interval := n.watchdog
	if interval == 0 {
		interval = statusInterval
	}
	t := n.clock.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			_ = n.send(notifyStopping + "\n" + notifyStatus + "stopping")
			return
		case <-t.C():
		}
		last = n.tick(ctx, last, log)
	}
}

// tick pings the watchdog if the daemon is alive and refreshes the status
// line if it changed. It returns the status line sent last.
func (n *Notifier) tick(ctx context.Context, last string, log interface{ Warn(string, ...any) }) string {
	if n.watchdog > 0 {
		if err := n.alive(ctx); err != nil {
			log.Warn("not pinging the watchdog: daemon is wedged", "err", err)
		} else if err := n.send(notifyWatchdog); err != nil {
			log.Warn("sd_notify failed", "err", err)
		}
	}
	if s := n.status(); s != last {
		if err := n.send(notifyStatus + s); err != nil {
			log.Warn("sd_notify failed", "err", err)
		}
		return s
	}
	return last
}
