package holding

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/door/satoken"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func podsWith(t *testing.T, pods ...string) *versioncache.Cache {
	t.Helper()
	c := versioncache.New(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, 10)
	var objs []*versioncache.Object
	for _, raw := range pods {
		o, err := versioncache.NewObject([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	c.Replace(objs, 9)
	return c
}

func TestPodGetter(t *testing.T) {
	pods := podsWith(t,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"a","name":"p","uid":"u1","resourceVersion":"5"}}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"a","name":"q","uid":"u2","resourceVersion":"6",`+
			`"deletionTimestamp":"2026-01-02T03:04:05Z"}}`)
	get := PodGetter([]*versioncache.Cache{pods})
	for _, tc := range []struct {
		name, uid string
		deleting  bool
		wantErr   error
	}{{"p", "u1", false, nil}, {"q", "u2", true, nil}, {"r", "", false, satoken.ErrPodNotFound}} {
		p, err := get("a", tc.name)
		if !errors.Is(err, tc.wantErr) || p.UID != tc.uid || (p.DeletionTimestamp != nil) != tc.deleting {
			t.Errorf("%s: got %+v, %v; want uid %q, deleting %v, err %v", tc.name, p, err, tc.uid, tc.deleting, tc.wantErr)
		}
	}
	want := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if p, _ := get("a", "q"); !p.DeletionTimestamp.Equal(want) {
		t.Errorf("deletionTimestamp: got %v, want %v", p.DeletionTimestamp, want)
	}
	notReady := versioncache.New(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, 10)
	if _, err := PodGetter([]*versioncache.Cache{notReady})("a", "p"); err == nil || errors.Is(err, satoken.ErrPodNotFound) {
		t.Errorf("pods not synced: got %v, want an error other than not found", err)
	}
}

func TestKeyReaderMinter(t *testing.T) {
	pods := podsWith(t,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"a","name":"mirror","uid":"u0","resourceVersion":"4",`+
			`"annotations":{"kubernetes.io/config.mirror":"x"}},"spec":{"serviceAccountName":"default"}}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"a","name":"p","uid":"u1","resourceVersion":"5"},`+
			`"spec":{"serviceAccountName":"sa"}}`)
	var got []TokenPod
	mint := KeyReaderMinter([]*versioncache.Cache{pods}, func(_ context.Context, p TokenPod) (satoken.Minted, error) {
		got = append(got, p)
		return satoken.Minted{Token: "tok"}, nil
	})
	minted, err := mint(context.Background())
	if err != nil || minted.Token != "tok" {
		t.Fatalf("got %q, %v; want tok", minted.Token, err)
	}
	want := TokenPod{Namespace: "a", Name: "p", UID: "u1", ServiceAccount: "sa"}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("minted for %+v, want only %+v", got, want)
	}
}
