package metastore

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The crash test runs a child process (this test binary, re-executed into
// TestHelperProcess) that applies a deterministic sequence of batches until
// the parent SIGKILLs it, then checks that what survived is exactly the
// generator's state at the stored watermark.
const (
	// crashEnvDB names the environment variable that turns
	// TestHelperProcess into the crash child and gives it the database path.
	crashEnvDB = "METASTORE_CRASH_CHILD_DB"
	// crashIterations is how many times the child is started and killed on
	// the same database file.
	crashIterations = 10
	// crashMinDelay and crashMaxDelay bound the random time between the
	// child reporting ready and its SIGKILL.
	crashMinDelay = 20 * time.Millisecond
	crashMaxDelay = 150 * time.Millisecond
	// crashChildLifetime bounds how long an orphaned child keeps writing if
	// the parent dies before killing it.
	crashChildLifetime = 30 * time.Second
	// crashMaxOps (ops) bounds the size of one generated batch.
	crashMaxOps = 12
	// crashNames (objects per namespace) and crashNamespaces bound the key
	// space, so batches keep overwriting and deleting earlier objects.
	crashNames      = 20
	crashNamespaces = 3
	// crashMaxPad (bytes) bounds the padding of a raw object, so commits
	// span several pages and a kill can land mid-write.
	crashMaxPad = 3000
	// crashLogSize (events) is the child's event log size: small, so the
	// log is trimmed while the child is killed.
	crashLogSize = 100
	// crashReady is the line the child prints once it is about to write.
	crashReady = "ready"
)

// crashResources are the resources the child writes, round robin.
var crashResources = []string{"pods", "configmaps", "nodes"}

// crashBatch is the deterministic batch that moves resource to batch
// index wm, committed at watermark crashWatermark(wm). Its ops carry RVs
// above the previous batch's watermark, and deletes carry the object's
// last state, as the sync's do, so every batch continues the event log.
func crashBatch(resource string, wm uint64) []Op {
	h := fnv.New64a()
	h.Write([]byte(resource))
	r := rand.New(rand.NewPCG(h.Sum64(), wm))
	batch := make([]Op, 1+r.IntN(crashMaxOps))
	for i := range batch {
		ns := fmt.Sprintf("ns-%d", r.IntN(crashNamespaces))
		name := fmt.Sprintf("obj-%02d", r.IntN(crashNames))
		rv := wm*crashMaxOps + uint64(i)
		raw := fmt.Appendf(nil, `{"resource":%q,"watermark":%d,"op":%d,"pad":%q}`,
			resource, wm, i, strings.Repeat("x", r.IntN(crashMaxPad)))
		batch[i] = Op{Delete: r.IntN(3) == 0, Object: Object{Namespace: ns, Name: name, RV: rv, Raw: raw}}
	}
	return batch
}

// crashWatermark is the watermark batch wm is committed at: its highest
// possible RV.
func crashWatermark(wm uint64) uint64 { return wm*crashMaxOps + crashMaxOps - 1 }

// crashBatchOf is the batch index of a stored watermark (0: none).
func crashBatchOf(watermark uint64) uint64 { return watermark / crashMaxOps }

// crashState replays batches 1..wm of resource, returning the objects in
// (namespace, name) order.
func crashState(resource string, wm uint64) []Object {
	state := map[[2]string]Object{}
	for k := uint64(1); k <= wm; k++ {
		for _, op := range crashBatch(resource, k) {
			id := [2]string{op.Object.Namespace, op.Object.Name}
			if op.Delete {
				delete(state, id)
			} else {
				state[id] = op.Object
			}
		}
	}
	out := make([]Object, 0, len(state))
	for _, o := range state {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b Object) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// TestHelperProcess is the crash child; it does nothing unless started by
// TestCrashConsistency.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(crashEnvDB)
	if path == "" {
		return
	}
	if err := runCrashChild(path); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runCrashChild resumes every resource after its stored watermark and
// applies batches until killed, printing "resource watermark" after each
// commit.
func runCrashChild(path string) error {
	ctx := context.Background()
	s, err := openWith(ctx, path, Options{EventLogSize: crashLogSize})
	if err != nil {
		return err
	}
	next := map[string]uint64{}
	for _, r := range crashResources {
		_, wm, err := s.Load(ctx, r)
		if err != nil {
			return err
		}
		next[r] = crashBatchOf(wm) + 1
	}
	fmt.Println(crashReady)
	deadline := time.Now().Add(crashChildLifetime)
	for i := 0; time.Now().Before(deadline); i++ {
		r := crashResources[i%len(crashResources)]
		if err := s.Apply(ctx, r, crashBatch(r, next[r]), crashWatermark(next[r])); err != nil {
			return err
		}
		// One short write to a pipe is atomic, so the parent never reads
		// half a line.
		fmt.Printf("%s %d\n", r, next[r])
		next[r]++
	}
	return s.Close()
}

func TestCrashConsistency(t *testing.T) {
	path := testDBPath(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("kill delay seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	committed := map[string]uint64{} // highest watermark the child reported committed
	for iter := range crashIterations {
		delay := crashMinDelay + time.Duration(rng.Int64N(int64(crashMaxDelay-crashMinDelay)))
		for r, wm := range MustRunAndKill(t, path, delay) {
			committed[r] = max(committed[r], wm)
		}
		checkCrashState(t, path, iter, committed)
	}
	var total uint64
	for _, wm := range committed {
		total += wm
	}
	if total == 0 {
		t.Fatalf("batches committed over %d runs: got 0, want > 0", crashIterations)
	}
	t.Logf("batches committed: %v", committed)
}

// checkCrashState reopens path after a kill and checks integrity, that no
// reported commit was lost, and that each resource holds exactly the
// generator's state at its watermark.
func checkCrashState(t *testing.T, path string, iter int, committed map[string]uint64) {
	t.Helper()
	s := MustOpen(t, path)
	defer MustClose(t, s)
	if err := s.IntegrityCheck(context.Background()); err != nil {
		t.Fatalf("run %d: IntegrityCheck: got error %v, want nil", iter, err)
	}
	for _, r := range crashResources {
		got, stored := MustLoad(t, s, r)
		wm := crashBatchOf(stored)
		if wm < committed[r] {
			t.Fatalf("run %d: %s batch: got %d, want >= %d (reported committed)", iter, r, wm, committed[r])
		}
		if d := diffObjects(got, crashState(r, wm)); d != "" {
			t.Fatalf("run %d: %s at batch %d: %s", iter, r, wm, d)
		}
		checkCrashLog(t, s, iter, r, wm)
	}
}

// checkCrashLog checks that resource's event log holds exactly the
// generator's ops above its floor, in order, up to batch wm.
func checkCrashLog(t *testing.T, s *Store, iter int, resource string, wm uint64) {
	t.Helper()
	snap, err := s.LoadSnapshot(context.Background(), resource)
	if err != nil {
		t.Fatalf("run %d: LoadSnapshot(%s): %v", iter, resource, err)
	}
	var want []Op
	for k := uint64(1); k <= wm; k++ {
		for _, op := range crashBatch(resource, k) {
			if op.Object.RV > snap.LogFloor {
				want = append(want, op)
			}
		}
	}
	if len(snap.Events) != len(want) || len(want) > crashLogSize || snap.LogFloor > snap.Watermark {
		t.Fatalf("run %d: %s log: got %d events above floor %d, want %d (at most %d)",
			iter, resource, len(snap.Events), snap.LogFloor, len(want), crashLogSize)
	}
	for i, e := range snap.Events {
		w := want[i]
		if e.Object.RV != w.Object.RV || (e.Type == Deleted) != w.Delete || !bytes.Equal(e.Object.Raw, w.Object.Raw) {
			t.Fatalf("run %d: %s log event %d: got %s %s, want the op %s (delete %v)",
				iter, resource, i, e.Type, describe(e.Object), describe(w.Object), w.Delete)
		}
	}
}

// MustRunAndKill starts the crash child on path, SIGKILLs it delay after it
// reports ready, and returns the highest watermark it reported committed
// per resource.
func MustRunAndKill(t *testing.T, path string, delay time.Duration) map[string]uint64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnvDB+"="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("child stdout: got error %v, want nil", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: got error %v, want nil", err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != crashReady {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child first line: got %q, want %q; stderr: %s", lines.Text(), crashReady, stderr.String())
	}
	timer := time.AfterFunc(delay, func() { cmd.Process.Kill() })
	defer timer.Stop()
	reported := map[string]uint64{}
	for lines.Scan() {
		var r string
		var wm uint64
		if _, err := fmt.Sscanf(lines.Text(), "%s %d", &r, &wm); err != nil {
			t.Fatalf("child line %q: got error %v, want nil", lines.Text(), err)
		}
		reported[r] = max(reported[r], wm)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child exit: got %v, want killed by SIGKILL; stderr: %s", err, stderr.String())
	}
	return reported
}
