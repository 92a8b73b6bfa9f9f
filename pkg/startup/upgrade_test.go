package startup_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/atrest"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/seal"
	"github.com/apiserver-lite/apiserver-lite/pkg/startup"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	_ "github.com/mattn/go-sqlite3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// The resources every fixture holds, keyed as the build that wrote them
// keyed them.
var (
	fixtureConfigMaps = cloudsync.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "app"}
	fixtureNodes      = cloudsync.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, FieldSelector: "metadata.name=edge-1"}
	fixtureSecrets    = cloudsync.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, Namespace: "app"}
)

// fixtureKey is the test state key the sealed fixture was written with.
var fixtureKey = bytes.Repeat([]byte{7}, 32)

// loadFixture writes the SQL of testdata/stores/name into a fresh
// database in dir and returns its path.
func loadFixture(t *testing.T, dir, name string) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", "stores", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "state.db")
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(string(text)); err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return path
}

// openFixture opens path as the daemon does: with its sealing (and the
// test key for a sealed fixture), moving nothing aside.
func openFixture(t *testing.T, path string, sealed bool) *metastore.Store {
	t.Helper()
	keyFile := ""
	if sealed {
		keyFile = filepath.Join(t.TempDir(), "state.key")
		if err := seal.WriteKeyFile(keyFile, fixtureKey); err != nil {
			t.Fatal(err)
		}
	}
	sealing, err := atrest.StateSealing(keyFile, filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	st, rec, err := metastore.OpenOrRecover(context.Background(), path, metastore.Options{Sealing: sealing})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if rec.MovedTo != "" {
		t.Fatalf("open: got the store moved aside (%s), want it migrated", rec.Reason)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func TestStoresFromEarlierBuildsServe(t *testing.T) {
	for _, tc := range []struct {
		file   string
		sealed bool
		// logged says whether the build kept an event log, so a watch
		// from before the last changes resumes instead of expiring.
		logged bool
	}{
		{file: "v1.sql"},
		{file: "v2.sql", logged: true},
		{file: "v2-sealed.sql", sealed: true, logged: true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			dir := t.TempDir()
			st := openFixture(t, loadFixture(t, dir, tc.file), tc.sealed)
			res := []cloudsync.Resource{fixtureConfigMaps, fixtureNodes}
			if tc.sealed {
				res = append(res, fixtureSecrets)
			}
			stored := make([]startup.Resource, len(res))
			for i, r := range res {
				stored[i] = r.Stored()
			}
			caches, err := startup.Prepare(context.Background(), st, stored, "edge-1", 10, discard())
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			checkServed(t, caches[0], "app", "one", 103, 105, `"v":"1b"`)
			if o, _, err := caches[0].Get("app", "two"); err != nil || o != nil {
				t.Errorf("app/two: got %v, %v, want it deleted at 104", o, err)
			}
			checkServed(t, caches[1], "", "edge-1", 100, 100, `"podCIDR":"10.244.1.0/24"`)
			if tc.sealed {
				checkServed(t, caches[2], "app", "creds", 106, 107, `"password":"c2VjcmV0"`)
			}
			checkResume(t, caches[0], tc.logged)
		})
	}
}

// checkServed checks that c serves ns/name at rv, with want in its JSON,
// and that c is at watermark wm with the resource's discovery info.
func checkServed(t *testing.T, c *versioncache.Cache, ns, name string, rv, wm uint64, want string) {
	t.Helper()
	o, at, err := c.Get(ns, name)
	if err != nil || o == nil {
		t.Fatalf("%s/%s: got %v, %v, want it", ns, name, o, err)
	}
	if o.RV != rv || at != wm || !strings.Contains(string(o.Raw), want) {
		t.Errorf("%s/%s: got rv %d at %d, %s; want rv %d at %d with %s", ns, name, o.RV, at, o.Raw, rv, wm, want)
	}
	if _, ok := c.Info(); !ok {
		t.Errorf("%s: got no discovery info, want the stored one", c.GVR())
	}
}

// checkResume watches c from 102, before the fixture's last two changes:
// with an event log it gets them, without one 410.
func checkResume(t *testing.T, c *versioncache.Cache, logged bool) {
	t.Helper()
	w, err := c.Watch(102, false, versioncache.Predicate{})
	var tooOld *versioncache.TooOldError
	switch {
	case !logged && errors.As(err, &tooOld):
		return
	case !logged:
		t.Fatalf("watch from 102 without a log: got %v, want too old", err)
	case err != nil:
		t.Fatalf("watch from 102: %v", err)
	}
	defer w.Stop()
	var got []string
	for _, e := range w.Initial() {
		got = append(got, string(e.Type)+" "+e.Object.Name)
	}
	if want := []string{string(watch.Modified) + " one", string(watch.Deleted) + " two"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("watch from 102: got %v, want %v", got, want)
	}
}
