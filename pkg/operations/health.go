package operations

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/atrest"
)

const (
	// DefaultMaxStaleness is how long a resource may go without hearing
	// from a reachable cloud before /readyz fails. kube-apiserver sends a
	// watch bookmark about every minute, so five allow for several missed.
	DefaultMaxStaleness = 5 * time.Minute
	// wedgedCommit is how long one commit may run before the daemon counts
	// as wedged. A commit takes milliseconds; SQLite's busy timeout is 5 s.
	wedgedCommit = 2 * time.Minute
	// cacheProbeTimeout bounds the wait for a cache's lock in /livez.
	cacheProbeTimeout = 5 * time.Second
	// storeProbeInterval spaces the write probes of /readyz, which each
	// cost an fsync.
	storeProbeInterval = 10 * time.Second
	// storeProbeKey is the meta key the write probe rewrites.
	storeProbeKey = "health/write-probe"
)

// Note is an informational /readyz line, which never fails readiness;
// ok false leaves it out.
type Note func() (name, info string, ok bool)

// AddNote adds n to /readyz. Call it before serving.
func (o *View) AddNote(n Note) { o.notes = append(o.notes, n) }

// check is one line of /livez or /readyz.
type check struct {
	name string
	err  error  // nil when the check passes
	info string // shown after "ok" with ?verbose
	// note marks an informational line that never fails: it is printed
	// as "name: info", without the [+] of a check.
	note bool
}

// livenessChecks fail only when the daemon is wedged: a sync loop ended
// early, a commit hangs, or a cache's lock cannot be taken.
func (o *View) livenessChecks(ctx context.Context) []check {
	checks := []check{{name: "ping"}}
	var syncErr error
	if n := o.syncExited.Load(); n > 0 {
		syncErr = fmt.Errorf("%d sync loops exited", n)
	}
	checks = append(checks, check{name: "sync-loops", err: syncErr})
	var commitErr error
	if _, inFlight := o.metrics.CommitState(); inFlight > wedgedCommit {
		commitErr = fmt.Errorf("a commit has been running for %s", inFlight.Round(time.Second))
	}
	checks = append(checks, check{name: "store-commit", err: commitErr})
	return append(checks, check{name: "caches", err: o.probeCaches(ctx)})
}

// probeCaches takes each cache's lock once. Concurrent callers share one
// probe; a probe stuck on a wedged lock is never repeated, every caller
// waits for it up to cacheProbeTimeout.
func (o *View) probeCaches(ctx context.Context) error {
	o.cacheMu.Lock()
	done := o.cacheProbe
	if done == nil {
		done = make(chan struct{})
		o.cacheProbe = done
		go func() {
			for _, c := range o.caches {
				_ = c.Stats()
			}
			o.cacheMu.Lock()
			o.cacheProbe = nil
			o.cacheMu.Unlock()
			close(done)
		}()
	}
	o.cacheMu.Unlock()
	t := o.clock.NewTimer(cacheProbeTimeout)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C():
		return errors.New("a cache lock was not released in time")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// readinessChecks: the store takes writes, every resource has data, and
// each resource is fresh while the cloud is reachable. The link and
// staleness while offline are shown but do not fail readiness: serving the
// last known state offline is the job.
func (o *View) readinessChecks(ctx context.Context) []check {
	checks := []check{{name: "store-writable", err: o.storeWritable(ctx)}}
	up := o.link()
	linkInfo := "connected (informational, does not affect readiness)"
	if !up {
		linkInfo = "disconnected (informational, does not affect readiness: the last known state is served)"
	}
	held := o.holdingsByKey()
	for i, c := range o.caches {
		if o.res[i].ForPods {
			checks = append(checks, o.heldForPodsCheck(i, c.Ready(), held))
			continue
		}
		checks = append(checks, o.dataLoadedCheck(o.labels[i], c.Ready()))
	}
	checks = append(checks, o.namespacedChecks()...)
	checks = append(checks, check{name: "cloud-link", info: linkInfo, note: true})
	if o.recovery.Moved() {
		checks = append(checks, check{name: "store-recovered", note: true,
			info: fmt.Sprintf("database moved aside at startup to %s: %s", o.recovery.MovedTo, o.recovery.Reason)})
	}
	if !o.sealed {
		checks = append(checks, check{name: "encryption-key", note: true, info: atrest.NoKeyNote})
	}
	for _, n := range o.notes {
		if name, info, ok := n(); ok {
			checks = append(checks, check{name: name, info: info, note: true})
		}
	}
	for i, r := range o.res {
		if r.ForPods && !o.caches[i].Ready() {
			continue // not held: nothing to be stale
		}
		checks = append(checks, o.stalenessCheck(o.labels[i], up))
	}
	return checks
}

// dataLoadedCheck fails for a resource with nothing to serve, saying why
// when the database was moved aside at startup.
func (o *View) dataLoadedCheck(name string, ready bool) check {
	c := check{name: "data-loaded:" + name}
	switch {
	case ready:
	case o.recovery.Moved():
		c.err = fmt.Errorf("no data yet: the damaged database was moved to %s (%s); relisting once the cloud is reachable",
			o.recovery.MovedTo, o.recovery.Reason)
	default:
		c.err = errors.New("no data yet: never synced and nothing stored")
	}
	return c
}

// stalenessCheck fails while the cloud is reachable and name heard
// nothing from it for longer than max-staleness; one never heard from
// counts from the daemon's start.
func (o *View) stalenessCheck(name string, up bool) check {
	c := check{name: "staleness:" + name}
	age, heard := o.metrics.Staleness(name)
	since, behind := "since the last cloud event or bookmark", "behind"
	if !heard {
		since, behind = "since start, never heard from the cloud", "behind, never heard from since start"
	}
	switch {
	case !up:
		c.info = fmt.Sprintf("%s %s, cloud unreachable (does not affect readiness)", age.Round(time.Second), behind)
	case age > o.maxStaleness:
		c.err = fmt.Errorf("%s %s, max-staleness is %s", age.Round(time.Second), since, o.maxStaleness)
	default:
		c.info = fmt.Sprintf("%s %s", age.Round(time.Second), since)
	}
	return c
}

// storeWritable fails after a failed commit, and otherwise rewrites a
// probe key at most every storeProbeInterval.
func (o *View) storeWritable(ctx context.Context) error {
	if err, _ := o.metrics.CommitState(); err != nil {
		return fmt.Errorf("last commit failed: %w", err)
	}
	o.probeMu.Lock()
	defer o.probeMu.Unlock()
	now := o.clock.Now()
	if !o.probeAt.IsZero() && now.Sub(o.probeAt) < storeProbeInterval {
		return o.probeErr
	}
	o.probeAt = now
	o.probeErr = o.store.PutMeta(ctx, storeProbeKey, []byte(now.UTC().Format(time.RFC3339)))
	return o.probeErr
}

// serveChecks answers /livez, /readyz or /healthz in kube-apiserver's
// format: "ok", or with ?verbose (or on failure) one line per check.
func serveChecks(name string, checks func(context.Context) []check) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		list := checks(r.Context())
		if one := r.PathValue("check"); one != "" {
			i := slices.IndexFunc(list, func(c check) bool { return c.name == one })
			if i < 0 {
				http.NotFound(w, r)
				return
			}
			list = list[i : i+1]
		}
		var b strings.Builder
		failed := false
		for _, c := range list {
			switch {
			case c.note:
				fmt.Fprintf(&b, "%s: %s\n", c.name, c.info)
			case c.err != nil:
				failed = true
				fmt.Fprintf(&b, "[-]%s failed: %v\n", c.name, c.err)
			case c.info != "":
				fmt.Fprintf(&b, "[+]%s ok: %s\n", c.name, c.info)
			default:
				fmt.Fprintf(&b, "[+]%s ok\n", c.name)
			}
		}
		code := http.StatusOK
		if failed {
			code = http.StatusInternalServerError
			fmt.Fprintf(&b, "%s check failed\n", name)
		} else {
			fmt.Fprintf(&b, "%s check passed\n", name)
		}
		body := b.String()
		if _, verbose := r.URL.Query()["verbose"]; !verbose && !failed {
			body = "ok"
		}
		h := w.Header()
		h.Set("Content-Type", "text/plain; charset=utf-8")
		h.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}
