package pool

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// memberConfig is a member of site-a whose MintFor records the audiences
// asked for.
func memberConfig(asked *[][]string) MemberConfig {
	return MemberConfig{Pool: "site-a", Namespace: "apiserver-lite-pool", ServiceAccount: "apiserver-lite-pool",
		Audience: "pool-aud", Self: Holder{"edge-a", "10.0.0.1:10552"}, Cloud: &rest.Config{Host: "https://cloud"},
		MintFor: func(aud []string) (Minter, error) {
			*asked = append(*asked, aud)
			return func(context.Context, Pod) (string, time.Time, error) { return "", time.Time{}, errors.New("unused") }, nil
		},
		TokenConfig: func(transport.ResettableTokenSource) *rest.Config { return &rest.Config{Host: "https://cloud"} },
		Logger:      quiet()}
}

func TestNewElection(t *testing.T) {
	for _, tc := range []struct {
		name     string
		edit     func(*MemberConfig)
		wantNil  bool
		wantErr  string
		wantAuds [][]string
	}{
		{name: "no pool", edit: func(c *MemberConfig) { c.Pool = "" }, wantNil: true},
		{name: "pods not synced", edit: func(c *MemberConfig) {}, wantErr: "pods are not synced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked [][]string
			c := memberConfig(&asked)
			tc.edit(&c)
			e, err := NewElection(c)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error about %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || (e == nil) != tc.wantNil {
				t.Fatalf("got %v, %v; want nil elector %v", e, err, tc.wantNil)
			}
			if len(asked) != 0 {
				t.Errorf("got mints for %v, want none", asked)
			}
		})
	}
}

// A follower mints for the pool audience, never the cloud's, and fails
// on a cluster CA it cannot read.
func TestNewMemberFollower(t *testing.T) {
	var asked [][]string
	c := memberConfig(&asked)
	if f, st, err := NewMemberFollower(c, nil); f != nil || st != nil || err != nil {
		t.Fatalf("no elector: got %v, %v, %v; want nothing", f, st, err)
	}
	e, err := New(Config{Pool: c.Pool, Namespace: c.Namespace, Self: c.Self, Leases: fake.NewClientset().CoordinationV1(), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	f, st, err := NewMemberFollower(c, e)
	if err != nil || f == nil || st == nil {
		t.Fatalf("got %v, %v, %v; want a follower and its stats", f, st, err)
	}
	if want := [][]string{{"pool-aud"}}; !slices.EqualFunc(asked, want, slices.Equal) {
		t.Errorf("got mints for %v, want %v", asked, want)
	}
	c.Cloud = &rest.Config{Host: "https://cloud", TLSClientConfig: rest.TLSClientConfig{CAFile: filepath.Join(t.TempDir(), "missing")}}
	if _, _, err := NewMemberFollower(c, e); err == nil || !strings.Contains(err.Error(), "cluster CA") {
		t.Errorf("unreadable CA: got %v, want an error about the cluster CA", err)
	}
}

// Without a pool there is no election to run and no leader to read from,
// never a function that would fail on a nil receiver.
func TestRunnerOfNodeOf(t *testing.T) {
	var asked [][]string
	c := memberConfig(&asked)
	e, err := New(Config{Pool: c.Pool, Namespace: c.Namespace, Self: c.Self, Leases: fake.NewClientset().CoordinationV1(), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := NewMemberFollower(c, e)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		e        *Elector
		f        *Follower
		wantFunc bool
	}{
		{"no pool", nil, nil, false},
		{"a member", e, f, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RunnerOf(tc.e) != nil; got != tc.wantFunc {
				t.Errorf("RunnerOf: got a function %v, want %v", got, tc.wantFunc)
			}
			if got := NodeOf(tc.f) != nil; got != tc.wantFunc {
				t.Errorf("NodeOf: got a function %v, want %v", got, tc.wantFunc)
			}
		})
	}
}
