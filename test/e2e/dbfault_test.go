//go:build e2e

package e2e

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3" // the driver apiserver-lite uses
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// dbFaultLogLines is how much of the daemon's log is searched for the
// line saying why its database was moved aside.
const dbFaultLogLines = 400

// TestDatabaseFaultsAtStartup restarts apiserver-lite on a garbage, a
// truncated and a newer-schema database file in turn. Each time it must
// start (no crash loop), log why it moved the file aside to
// <name>.corrupt-<unix-time>, relist from the cloud and serve the cloud's
// objects again.
func TestDatabaseFaultsAtStartup(t *testing.T) {
	const ns = "dbfault"
	c := framework.New(t, framework.Options{Namespaces: []string{ns}})
	c.StartEdge()
	ctx := t.Context()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}, Data: map[string]string{"v": "1"}}
	if _, err := c.Admin.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create configmap: %v", err)
	}
	checkDurEdgeConverges(ctx, t, c, ns)
	damages := []struct {
		name       string
		damage     func(t *testing.T, path string)
		wantReason string
	}{
		{"garbage", func(t *testing.T, path string) {
			// No WAL: its pages would otherwise stand in for the garbage.
			for _, side := range []string{path + "-wal", path + "-shm"} {
				if err := os.Remove(side); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(path, []byte(strings.Repeat("not a database ", 4096)), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "not a database"},
		{"truncated", func(t *testing.T, path string) {
			checkpointEdgeDB(t, path)
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, "corrupt"},
		{"future schema", func(t *testing.T, path string) {
			db := openEdgeDB(t, path)
			defer db.Close()
			if _, err := db.Exec(`UPDATE schema_version SET version = version + 100`); err != nil {
				t.Fatal(err)
			}
		}, "schema version newer than supported"},
	}
	path := c.EdgeDBPath()
	for i, d := range damages {
		c.KillEdge()
		d.damage(t, path)
		c.StartEdge()
		moved, _ := filepath.Glob(path + ".corrupt-*")
		if got := countDatabases(moved); got != i+1 {
			t.Errorf("%s: got %d moved-aside databases %v, want %d", d.name, got, moved, i+1)
		}
		if log := c.EdgeProcess().Tail(dbFaultLogLines); !strings.Contains(log, "moved aside") || !strings.Contains(log, d.wantReason) {
			t.Errorf("%s: edge log lacks a moved-aside line with %q:\n%s", d.name, d.wantReason, log)
		}
		checkDurEdgeConverges(ctx, t, c, ns)
	}
}

// countDatabases counts the moved-aside databases among paths, not their
// -wal and -shm side files.
func countDatabases(paths []string) int {
	n := 0
	for _, p := range paths {
		if !strings.HasSuffix(p, "-wal") && !strings.HasSuffix(p, "-shm") {
			n++
		}
	}
	return n
}

// openEdgeDB opens the stopped daemon's database for writing.
func openEdgeDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// checkpointEdgeDB moves the WAL's pages into the database file, so that
// truncating the file damages committed pages.
func checkpointEdgeDB(t *testing.T, path string) {
	t.Helper()
	db := openEdgeDB(t, path)
	defer db.Close()
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
}
