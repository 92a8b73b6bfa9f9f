//go:build e2e

package framework

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestAuditLogFilesSkipsOlderBackups: a backup rotated before since holds
// no request received since then and is not read; a later one, a name
// that is not a rotation time, and the current log are, oldest first.
func TestAuditLogFilesSkipsOlderBackups(t *testing.T) {
	c := &Cluster{Dir: t.TempDir()}
	names := []string{"audit-2026-11-27T18-40-29.073.log", "audit-2026-11-27T18-45-00.000.log", "audit-odd.log", "audit.log", "audit-policy.yaml"}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(c.Dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	since := time.Date(2026, 11, 27, 18, 42, 0, 0, time.UTC)
	got, err := c.auditLogFiles(since)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(c.Dir, "audit-2026-11-27T18-45-00.000.log"), filepath.Join(c.Dir, "audit-odd.log"), filepath.Join(c.Dir, "audit.log")}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestOpenWatchesDropsEnded: of the watches received in [since, at), those
// that ended before at are dropped, one ended after at is kept, and other
// verbs, other users and a watch received before since are not returned;
// the events spread over a backup and the current log.
func TestOpenWatchesDropsEnded(t *testing.T) {
	c := &Cluster{Dir: t.TempDir(), t: t, opts: Options{AuditLog: true}}
	at := time.Date(2026, 11, 27, 18, 50, 0, 0, time.UTC)
	since := at.Add(-10 * time.Minute)
	ev := func(id, verb, stage, user string, received, stamp time.Duration) string {
		return `{"auditID":"` + id + `","verb":"` + verb + `","stage":"` + stage + `","user":{"username":"` + user +
			`"},"requestReceivedTimestamp":"` + at.Add(received).Format(time.RFC3339Nano) +
			`","stageTimestamp":"` + at.Add(stamp).Format(time.RFC3339Nano) + `"}` + "\n"
	}
	backup := ev("kept", "watch", "ResponseStarted", "node", -9*time.Minute, -9*time.Minute) +
		ev("ended", "watch", "ResponseStarted", "node", -8*time.Minute, -8*time.Minute) +
		ev("before", "watch", "ResponseStarted", "node", -11*time.Minute, -11*time.Minute)
	current := ev("ended", "watch", "ResponseComplete", "node", -8*time.Minute, -time.Minute) +
		ev("later", "watch", "ResponseStarted", "node", -time.Minute, -time.Minute) +
		ev("later", "watch", "ResponseComplete", "node", -time.Minute, time.Minute) +
		ev("other", "watch", "ResponseStarted", "admin", -time.Minute, -time.Minute) +
		ev("get", "get", "ResponseComplete", "node", -time.Minute, -time.Minute)
	for name, body := range map[string]string{"audit-2026-11-27T18-45-00.000.log": backup, "audit.log": current} {
		if err := os.WriteFile(filepath.Join(c.Dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, e := range c.OpenWatches(func(u string) bool { return u == "node" }, since, at) {
		got = append(got, e.AuditID)
	}
	if want := []string{"kept", "later"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
