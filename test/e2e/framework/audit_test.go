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
