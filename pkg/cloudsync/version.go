package cloudsync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/utils/clock"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

// VersionKey is the meta key the cloud's version.Info is stored under.
const VersionKey = "version"

// versionRefreshInterval is how often a known cloud version is fetched
// again, so a cloud upgrade shows in /version within this time.
const versionRefreshInterval = 10 * time.Minute

// VersionConfig wires a VersionKeeper. Fetcher and Store are required.
type VersionConfig struct {
	Fetcher VersionFetcher
	Store   MetaStore
	Clock   clock.Clock  // nil means the real clock
	Logger  *slog.Logger // nil means slog.Default()
}

// VersionKeeper keeps the cloud kube-apiserver's version.Info: fetched
// from the cloud, persisted, and loaded again on start, so /version is
// answered while the cloud is unreachable. Safe for concurrent use.
type VersionKeeper struct {
	cfg VersionConfig
	mu  sync.Mutex
	// info is the last version the cloud reported; valid when known.
	// Both are guarded by mu.
	info  version.Info
	known bool
}

// NewVersionKeeper returns a keeper that knows no version yet.
func NewVersionKeeper(cfg VersionConfig) *VersionKeeper {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &VersionKeeper{cfg: cfg}
}

// Version returns the cloud's last known version, and false while none is
// known.
func (k *VersionKeeper) Version() (version.Info, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.info, k.known
}

// Load reads the persisted version, if any.
func (k *VersionKeeper) Load(ctx context.Context) error {
	raw, err := k.cfg.Store.GetMeta(ctx, VersionKey)
	switch {
	case errors.Is(err, metastore.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("load cloud version: %w", err)
	}
	var info version.Info
	if err := json.Unmarshal(raw, &info); err != nil {
		return fmt.Errorf("decode cloud version: %w", err)
	}
	k.set(info)
	return nil
}

// Run fetches the version until ctx ends: with backoff until the cloud
// answers, then again every versionRefreshInterval. It returns nil when
// ctx ends.
func (k *VersionKeeper) Run(ctx context.Context) error {
	b := link.NewBackoff()
	for ctx.Err() == nil {
		d := versionRefreshInterval
		if err := k.Refresh(ctx); err != nil {
			k.cfg.Logger.Debug("cloud version fetch failed, backing off", "err", err)
			d = link.RetryDelay(&b, err)
		} else {
			b = link.NewBackoff()
		}
		_ = link.Sleep(ctx, k.cfg.Clock, d)
	}
	return nil
}

// Refresh fetches the cloud's version and persists it when it changed.
func (k *VersionKeeper) Refresh(ctx context.Context) error {
	info, err := k.cfg.Fetcher.ServerVersion()
	if err != nil {
		return fmt.Errorf("fetch cloud version: %w", err)
	}
	if old, ok := k.Version(); ok && old == *info {
		return nil
	}
	raw, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("encode cloud version: %w", err)
	}
	if err := k.cfg.Store.PutMeta(ctx, VersionKey, raw); err != nil {
		return fmt.Errorf("persist cloud version: %w", err)
	}
	k.set(*info)
	k.cfg.Logger.Info("cloud version", "gitVersion", info.GitVersion)
	return nil
}

func (k *VersionKeeper) set(info version.Info) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.info, k.known = info, true
}
