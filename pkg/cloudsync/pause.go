package cloudsync

import (
	"context"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// pause waits after a failed sync attempt for the retry delay, or until
// up is closed (the link prober saw the link come back since the attempt
// started) and then resumeDelay, whichever is first; a cloud's
// Retry-After is always waited out. It returns ctx.Err() if ctx ends
// first.
func (s *Syncer) pause(ctx context.Context, err error, up <-chan struct{}) error {
	d := link.RetryDelay(&s.backoff, err)
	if _, ok := apierrors.SuggestsClientDelay(err); ok {
		up = nil // the cloud itself asked for the pause
	}
	t := s.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
	case <-up:
		return link.Sleep(ctx, s.cfg.Clock, s.cfg.Link.RelistDelay())
	}
	return nil
}
