package main

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/atrest"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

// mustSeedCredentials stores, sealed with key, a Secret and one value of
// every kind of credential the daemon keeps, and returns the markers
// that must not appear in a snapshot.
func mustSeedCredentials(t *testing.T, data, key string) []string {
	t.Helper()
	ctx := context.Background()
	sealing, err := atrest.StateSealing(key, data)
	if err != nil {
		t.Fatal(err)
	}
	st, err := metastore.OpenWith(ctx, filepath.Join(data, dbFile), metastore.Options{Sealing: sealing})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	secret := `{"apiVersion":"v1","kind":"Secret","metadata":{"namespace":"ns","name":"s","uid":"u1","resourceVersion":"7"},"data":{"k":"c2VjcmV0LW1hcmtlcg=="}}`
	if err := st.Apply(ctx, "/v1/secrets", []metastore.Op{{Object: metastore.Object{Namespace: "ns", Name: "s", RV: 7, Raw: []byte(secret)}}}, 7); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"tokenrequest/pod-uid/abc":   "token-answer-marker",
		"auth/token/hash":            "token-review-marker",
		"auth/decision/hash":         "decision-marker",
		"getonly/api/v1/nodes/n1#ab": "getonly-marker",
	} {
		if err := st.PutMeta(ctx, k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"c2VjcmV0LW1hcmtlcg", "token-answer-marker", "token-review-marker", "decision-marker", "getonly-marker"}
}

func TestSnapshotCarriesNoCredentials(t *testing.T) {
	data, key := filepath.Join(t.TempDir(), "data"), mustKeyFile(t)
	markers := mustSeedCredentials(t, data, key)
	snap := filepath.Join(t.TempDir(), "node.snap")
	if out, err := runCommand(t, "snapshot", "save", "--data-dir", data, snap); err != nil || !strings.Contains(out, "encrypted") {
		t.Fatalf("save: got %v %q, want it to say the Secrets are encrypted", err, out)
	}
	db, err := sql.Open("sqlite3", "file:"+snap+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	err = db.QueryRow(`SELECT count(*) FROM meta WHERE key LIKE 'tokenrequest/%' OR key LIKE 'auth/token/%'
		OR key LIKE 'auth/decision/%' OR key LIKE 'getonly/%'`).Scan(&n)
	if err != nil || n != 0 {
		t.Fatalf("got %d credential rows (%v) in the snapshot, want 0", n, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM objects WHERE resource = '/v1/secrets'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("got %d secrets (%v) in the snapshot, want 1, sealed", n, err)
	}
	raw, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range markers {
		if bytes.Contains(raw, []byte(m)) {
			t.Errorf("snapshot holds %q, want it nowhere in the file", m)
		}
	}

	restored := filepath.Join(t.TempDir(), "restored")
	if _, err := runCommand(t, "snapshot", "restore", "--data-dir", restored, snap); err == nil ||
		!strings.Contains(err.Error(), "encryption-key-file") {
		t.Fatalf("restore without the key: got %v, want refused naming encryption-key-file", err)
	}
	out, err := runCommand(t, "snapshot", "restore", "--data-dir", restored, "--encryption-key-file", key, snap)
	if err != nil || !strings.Contains(out, "projected service-account tokens") {
		t.Fatalf("restore: got %v %q, want it to say what is fetched again", err, out)
	}
}
