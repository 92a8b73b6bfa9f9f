package demand

import (
	"context"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// Runner returns the Run of a Holder of res's OnDemand resources (Select
// fills in cfg's kinds and caches), or nil when res holds nothing by
// reference. Each object is read through raw without client-go's retries
// (RawClient.WithoutRetries): its watch retries on its own jittered
// backoff (backoff.go), where client-go would retry a 429 after exactly
// its Retry-After, in step with the rest of the fleet.
func Runner(cfg Config, raw *cloudsync.RawClient, res []cloudsync.Resource, caches []*versioncache.Cache) (func(context.Context) error, error) {
	cfg.Source = raw.WithoutRetries().ListerWatcher
	cfg, ok, err := Select(cfg, res, caches)
	if !ok || err != nil {
		return nil, err
	}
	return New(cfg).Run, nil
}
