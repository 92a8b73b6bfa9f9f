package listwatch

import (
	"context"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// tooLargeRVWait is how long a get or list with a resourceVersion newer than
// the cache waits for the cache to catch up before answering 504, as
// kube-apiserver's watch cache does.
const tooLargeRVWait = 3 * time.Second

// awaitRV returns once c has reached rv. After tooLargeRVWait on the
// server's clock it returns kube-apiserver's too-large-resourceVersion
// error; when ctx ends first it returns the mapped context error.
func (s *server) awaitRV(ctx context.Context, c *versioncache.Cache, rv uint64) error {
	if rv == 0 || c.RV() >= rv {
		return nil
	}
	timedOut, err := s.waitForRV(ctx, c, rv, tooLargeRVWait)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return response.CacheError(ctx.Err())
	case timedOut:
		return response.TooLargeRV(rv, c.RV())
	default:
		return response.CacheError(err)
	}
}

// waitForRV waits until c reaches rv, ctx ends, or d passes on the
// server's clock (timedOut).
func (s *server) waitForRV(ctx context.Context, c *versioncache.Cache, rv uint64, d time.Duration) (timedOut bool, err error) {
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	timer := s.clock.NewTimer(d)
	defer timer.Stop()
	go func() {
		select {
		case <-timer.C():
			cancel()
		case <-waitCtx.Done():
		}
	}()
	err = c.WaitForRV(waitCtx, rv)
	return err != nil && ctx.Err() == nil && waitCtx.Err() != nil, err
}
