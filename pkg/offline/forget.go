package offline

import (
	"context"
	"log/slog"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/watch"
)

// PodPrefix is the key prefix of every stored answer bound to the pod with
// uid.
func PodPrefix(uid string) string { return TokenRequestPrefix + uid + "/" }

// ForgetDeletedPods removes the stored tokens of every pod deleted from
// pods (the node's pods) until ctx ends or the cache closes.
func ForgetDeletedPods(ctx context.Context, pods *versioncache.Cache, store PrefixDeleter, log *slog.Logger) error {
	if err := pods.WaitForRV(ctx, 1); err != nil {
		return nil // ended or closed before the first sync
	}
	for ctx.Err() == nil {
		w, err := pods.WatchFromNow(versioncache.Predicate{})
		if err != nil {
			return nil // closed
		}
		forgetUntilClosed(ctx, w, store, log)
		w.Stop()
	}
	return nil
}

func forgetUntilClosed(ctx context.Context, w *versioncache.Watcher, store PrefixDeleter, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events():
			if !ok {
				return
			}
			if ev.Type != watch.Deleted || ev.Object == nil {
				continue
			}
			if ev.Object.UID == "" {
				continue
			}
			if err := store.DeleteMetaPrefix(ctx, PodPrefix(ev.Object.UID)); err != nil {
				log.Warn("stored tokens of a deleted pod not removed", "namespace", ev.Object.Namespace, "name", ev.Object.Name, "err", err)
			}
		}
	}
}
