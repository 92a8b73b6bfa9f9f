package atrest

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/offline"
	clocktesting "k8s.io/utils/clock/testing"
)

// The pruner removes stored credentials past use at start and again each
// storedPruneInterval, keeps those still usable, and stops with its context.
func TestStoredPruner(t *testing.T) {
	const grace = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	st, err := metastore.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	put := func(key string, at time.Time) {
		t.Helper()
		v := fmt.Sprintf(`{"allowed":true,"held":true,"at":%q,"expires":%q}`, at.Format(time.RFC3339), at.Add(grace).Format(time.RFC3339))
		if err := st.PutMeta(ctx, key, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	put("auth/decision/old", clk.Now().Add(-2*grace))
	put("auth/decision/recent", clk.Now())
	put("tokenrequest/uid/expired", clk.Now().Add(-2*grace))
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = StoredPruner(st, ScrubbedAnswers{offline.MetaStore{Store: st}}, clk, grace, slog.New(slog.DiscardHandler))(ctx)
	})
	waitStored(t, st, map[string]bool{"auth/decision/old": false, "tokenrequest/uid/expired": false, "auth/decision/recent": true})

	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	clk.Step(storedPruneInterval + grace)
	waitStored(t, st, map[string]bool{"auth/decision/recent": false})
	cancel()
	wg.Wait()
}

// waitStored waits until each key's presence in st is as wanted.
func waitStored(t *testing.T, st *metastore.Store, want map[string]bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		done := true
		for k, present := range want {
			_, err := st.GetMeta(context.Background(), k)
			done = done && (err == nil) == present
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stored keys never reached %v", want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
