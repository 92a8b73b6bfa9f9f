package demand

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/demand/nodescope"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"k8s.io/utils/clock"
)

const (
	// resumeMetaKey is the store's meta key of the resume points.
	resumeMetaKey = "demand/resume"
	// resumeFlush is how long resume points moved by events and bookmarks
	// wait before they are written, so the bookmarks of many watches cost
	// one write. A point lost to a crash only makes a watch resume from an
	// older, still correct resourceVersion; kube-apiserver keeps at least
	// its last 75 s of events, so points this fresh are usually still
	// served.
	resumeFlush = 10 * time.Second
	// resumeFlushListed is that wait for a point a list set (a new object,
	// or one whose point had expired, as every point does when the cloud
	// restarts): the older stored point would cost a list again, so it is
	// written within a second, still one write for a burst of lists.
	resumeFlushListed = time.Second
	// maxResumeBytes bounds the stored resume points read back, against a
	// corrupted or hostile value: far above a node's few hundred
	// references at about 60 bytes each.
	maxResumeBytes = 4 << 20
)

// resumePoints is, for each held reference, the resourceVersion its watch
// resumes from after a restart: the last one it delivered (list, event or
// bookmark) once Run's loop had committed what came with it, so the stored
// state of the object is that of the cloud at that resourceVersion or
// later. Owned by Run's loop.
type resumePoints struct {
	rv map[nodescope.Ref]uint64
	// timer fires at due when rv has changes not yet written; nil when
	// none.
	timer clock.Timer
	due   time.Time
}

// resumeKey is the stored key of r: "<kind>/<namespace>/<name>". Names and
// namespaces never hold a slash, so the key splits back unambiguously.
func resumeKey(r nodescope.Ref) string {
	return r.Kind.String() + "/" + r.Namespace + "/" + r.Name
}

// decodeResume reads stored resume points; any malformed entry discards
// them all, which only costs a list per reference.
func decodeResume(data []byte) (map[nodescope.Ref]uint64, error) {
	if len(data) > maxResumeBytes {
		return nil, fmt.Errorf("resume points: %d bytes, over %d", len(data), maxResumeBytes)
	}
	var stored map[string]uint64
	if err := json.Unmarshal(data, &stored); err != nil {
		return nil, fmt.Errorf("resume points: %w", err)
	}
	out := make(map[nodescope.Ref]uint64, len(stored))
	for k, rv := range stored {
		parts := strings.Split(k, "/")
		if len(parts) != 3 || parts[1] == "" || parts[2] == "" || rv == 0 {
			return nil, fmt.Errorf("resume points: bad entry %q: %d", k, rv)
		}
		r := nodescope.Ref{Namespace: parts[1], Name: parts[2]}
		switch parts[0] {
		case nodescope.Secret.String():
			r.Kind = nodescope.Secret
		case nodescope.ConfigMap.String():
			r.Kind = nodescope.ConfigMap
		default:
			return nil, fmt.Errorf("resume points: bad kind in %q", k)
		}
		out[r] = rv
	}
	return out, nil
}

// encodeResume is the stored form of rv.
func encodeResume(rv map[nodescope.Ref]uint64) ([]byte, error) {
	stored := make(map[string]uint64, len(rv))
	for r, v := range rv {
		stored[resumeKey(r)] = v
	}
	return json.Marshal(stored)
}

// loadResume reads the stored resume points. They are used only when
// both held kinds were loaded from the store (ready before start): a
// point without the stored state it was taken with would skip the
// object's state at that point, so such points are deleted at once, before
// the kinds start empty and a later start would take them for theirs.
func (d *Holder) loadResume(ctx context.Context, loaded bool) error {
	d.resume.rv = map[nodescope.Ref]uint64{}
	data, err := d.cfg.Store.GetMeta(ctx, resumeMetaKey)
	if errors.Is(err, metastore.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read resume points: %w", err)
	}
	if !loaded {
		return d.flushResume(ctx)
	}
	rv, err := decodeResume(data)
	if err != nil {
		d.log.Warn("stored resume points unreadable, every referenced object is read again", "err", err)
		return nil
	}
	d.resume.rv = rv
	return nil
}

// noteResume records that r's state is committed up to rv, to be written
// within resumeFlush, or resumeFlushListed when a list set it.
func (d *Holder) noteResume(r nodescope.Ref, rv uint64, listed bool) {
	if rv <= d.resume.rv[r] {
		return
	}
	d.resume.rv[r] = rv
	wait := resumeFlush
	if listed {
		wait = resumeFlushListed
	}
	due := d.cfg.Clock.Now().Add(wait)
	if d.resume.timer != nil && !d.resume.due.After(due) {
		return
	}
	if d.resume.timer != nil {
		d.resume.timer.Stop()
	}
	d.resume.timer, d.resume.due = d.cfg.Clock.NewTimer(wait), due
}

// forgetResume drops r's resume point and writes the points at once,
// before r's state leaves the store: a point that outlived its state
// would, once r is referenced again, resume past the state it stood for.
func (d *Holder) forgetResume(ctx context.Context, r nodescope.Ref) error {
	if _, ok := d.resume.rv[r]; !ok {
		return nil
	}
	delete(d.resume.rv, r)
	return d.flushResume(ctx)
}

// forgetAllResume drops every resume point at once, as when the cloud's
// history went backwards and every object is read again.
func (d *Holder) forgetAllResume(ctx context.Context) error {
	clear(d.resume.rv)
	return d.flushResume(ctx)
}

// flushResume writes the resume points now.
func (d *Holder) flushResume(ctx context.Context) error {
	if d.resume.timer != nil {
		d.resume.timer.Stop()
		d.resume.timer = nil
	}
	data, err := encodeResume(d.resume.rv)
	if err != nil {
		return fmt.Errorf("encode resume points: %w", err)
	}
	if err := d.cfg.Store.PutMeta(ctx, resumeMetaKey, data); err != nil {
		return fmt.Errorf("write resume points: %w", err)
	}
	return nil
}

// resumeDue fires when the resume points have changes to write; nil
// (never) when none.
func (d *Holder) resumeDue() <-chan time.Time {
	if d.resume.timer == nil {
		return nil
	}
	return d.resume.timer.C()
}

// relistAll restarts every held object's watch with a list, after a
// syncer found the cloud's history behind the stored one: the resume
// points are resourceVersions a rebuilt cloud has not issued, and a watch
// from one would wait silently until the cloud passes it.
func (d *Holder) relistAll(ctx context.Context) error {
	d.regressed = d.cfg.Link.Regressed()
	d.log.Warn("cloud history went backwards, listing every referenced object again", "objects", len(d.workers))
	if err := d.forgetAllResume(ctx); err != nil {
		return err
	}
	refs := make([]nodescope.Ref, 0, len(d.workers))
	for r := range d.workers {
		refs = append(refs, r)
	}
	for _, r := range refs {
		d.stopWorker(r)
		d.startWorker(ctx, r)
	}
	return nil
}
