//go:build e2e

package bench

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// Edge start polling.
const (
	// pollEvery is the polling period of start and delivery waits; it
	// bounds the error of a start-up figure.
	pollEvery = 10 * time.Millisecond
	// startTimeout bounds a sync from scratch or a cold start.
	startTimeout = 10 * time.Minute
)

// syncResult is what one fresh apiserver-lite took to sync the cloud.
type syncResult struct {
	took    time.Duration // process start to /readyz with every object served
	objects int           // pods plus configmaps served at the end
	// linkBytes is what the cloud link carried during the sync, both ways.
	linkBytes int64
	dbBytes   int64 // size of the data dir after the sync
	// cpu is apiserver-lite's utime+stime from its start to /readyz: the
	// CPU the sync cost it, start-up on an empty data dir included.
	cpu time.Duration
}

// syncFresh kills apiserver-lite if it runs, removes its state, starts it
// and waits until it is ready and serves every pod and configmap the cloud
// holds.
func syncFresh(ctx context.Context, c *framework.Cluster, lite, kube *server) (syncResult, error) {
	return syncFreshWith(ctx, c, lite, kube, nil)
}

// syncFreshWith is syncFresh calling during right after the process has
// started; the function during returns is called once the sync is over.
func syncFreshWith(ctx context.Context, c *framework.Cluster, lite, kube *server, during func() (stop func() error)) (syncResult, error) {
	if c.EdgeProcess() != nil {
		c.KillEdge()
	}
	dataDir := filepath.Dir(c.EdgeDBPath())
	if err := os.RemoveAll(dataDir); err != nil {
		return syncResult{}, fmt.Errorf("remove edge data: %w", err)
	}
	wantPods, err := kube.countPods(ctx, c.NodeName)
	if err != nil {
		return syncResult{}, err
	}
	wantCMs, err := kube.countConfigMaps(ctx)
	if err != nil {
		return syncResult{}, err
	}
	s0, r0 := c.LinkBytes()
	start := time.Now()
	if err := c.EdgeProcess().Start(); err != nil {
		return syncResult{}, err
	}
	stop := func() error { return nil }
	if during != nil {
		stop = during()
	}
	r := syncResult{objects: wantPods + wantCMs}
	r.took, r.cpu, err = awaitSynced(ctx, c, lite, start, wantPods, wantCMs)
	if serr := stop(); err == nil {
		err = serr
	}
	if err != nil {
		return syncResult{}, fmt.Errorf("sync from scratch: %w", err)
	}
	s1, r1 := c.LinkBytes()
	r.linkBytes = s1 - s0 + r1 - r0
	r.dbBytes, err = dirSize(dataDir)
	return r, err
}

// awaitSynced waits until lite, started at start, is ready and serves the
// wanted objects, and returns the time that took and lite's CPU by then.
// It polls the cheap /readyz, then checks the counts, which cost LISTs and
// the client's decode: the sync ends at /readyz unless a count was still
// short then, and the CPU then includes the checking LISTs.
func awaitSynced(ctx context.Context, c *framework.Cluster, lite *server, start time.Time, pods, cms int) (took, cpu time.Duration, err error) {
	if err := PollUntil(ctx, func() error { return ready(ctx, lite) }); err != nil {
		return 0, 0, err
	}
	took = time.Since(start)
	if cpu, err = lite.cpu(); err != nil {
		return 0, 0, err
	}
	if serves(ctx, lite, c.NodeName, pods, cms) == nil {
		return took, cpu, nil
	}
	if err := PollUntil(ctx, func() error { return serves(ctx, lite, c.NodeName, pods, cms) }); err != nil {
		return 0, 0, err
	}
	took = time.Since(start)
	cpu, err = lite.cpu()
	return took, cpu, err
}

// coldTimes are a cold start's two figures: until the first LIST is
// answered, and until a LIST of every pod and configmap has been read and
// checked, which adds the client's decode of the whole data set.
type coldTimes struct {
	serving, full time.Duration
}

// coldStart kills apiserver-lite and restarts it on its data, with the
// cloud link cut when offline.
func coldStart(ctx context.Context, c *framework.Cluster, lite *server, pods, cms int, offline bool) (coldTimes, error) {
	c.KillEdge()
	if offline {
		c.CutLink()
		defer c.RestoreLink()
	}
	start := time.Now()
	if err := c.EdgeProcess().Start(); err != nil {
		return coldTimes{}, err
	}
	var t coldTimes
	err := PollUntil(ctx, func() error {
		_, _, err := rawGet(ctx, lite, "/api/v1/configmaps?limit=1", mediaJSON)
		return err
	})
	t.serving = time.Since(start)
	if err == nil {
		err = PollUntil(ctx, func() error { return serves(ctx, lite, c.NodeName, pods, cms) })
	}
	t.full = time.Since(start)
	if err != nil {
		return coldTimes{}, fmt.Errorf("cold start (offline %v): %w", offline, err)
	}
	return t, nil
}

// serves checks that s lists the wanted numbers of pods and configmaps.
func serves(ctx context.Context, s *server, node string, pods, cms int) error {
	gotPods, err := s.countPods(ctx, node)
	if err != nil {
		return err
	}
	gotCMs, err := s.countConfigMaps(ctx)
	if err != nil {
		return err
	}
	if gotPods != pods || gotCMs != cms {
		return fmt.Errorf("%s serves %d pods and %d configmaps, want %d and %d", s.name, gotPods, gotCMs, pods, cms)
	}
	return nil
}

// ready checks s's /readyz.
func ready(ctx context.Context, s *server) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s /readyz: %s", s.name, resp.Status)
	}
	return nil
}

// PollUntil calls check every pollEvery until it succeeds or startTimeout
// passes, and returns the last error.
func PollUntil(ctx context.Context, check func() error) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	for {
		err := check()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pollEvery):
		}
	}
}

// dirSize sums the sizes of the regular files under dir.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += info.Size()
		return nil
	})
	return n, err
}
