package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	authenticationv1 "k8s.io/api/authentication/v1"
)

func TestScopeOf(t *testing.T) {
	tests := []struct {
		name    string
		user    authenticationv1.UserInfo
		want    string
		wantErr string
	}{
		{"this node", authenticationv1.UserInfo{Username: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"}}, scopeNode, ""},
		{"node name without the group", authenticationv1.UserInfo{Username: "system:node:n1", Groups: []string{"system:authenticated"}}, scopeCluster, ""},
		{"admin", authenticationv1.UserInfo{Username: "admin", Groups: []string{"system:masters"}}, scopeCluster, ""},
		{"another node", authenticationv1.UserInfo{Username: "system:node:n2", Groups: []string{"system:nodes"}}, "", `node "n2", but node-name is "n1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := scopeOf(tt.user, "n1")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, errWrongNode) {
					t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v, want %q", got, err, tt.want)
			}
		})
	}
}

// An auto choice made online is stored and made again offline.
func TestResolveScopeStoredForOffline(t *testing.T) {
	ctx := context.Background()
	store, err := metastore.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	online := func(context.Context) (authenticationv1.UserInfo, error) {
		return authenticationv1.UserInfo{Username: "system:node:n1", Groups: []string{"system:nodes"}}, nil
	}
	offline := func(context.Context) (authenticationv1.UserInfo, error) {
		return authenticationv1.UserInfo{}, errors.New("connection refused")
	}
	if got, err := resolveScope(ctx, scopeAuto, "n1", online, store, log); err != nil || got != scopeNode {
		t.Fatalf("online: got %q, %v, want %q", got, err, scopeNode)
	}
	if got, err := resolveScope(ctx, scopeAuto, "n1", offline, store, log); err != nil || got != scopeNode {
		t.Errorf("offline restart: got %q, %v, want the stored %q", got, err, scopeNode)
	}
	if got, err := resolveScope(ctx, scopeCluster, "n1", online, store, log); err != nil || got != scopeCluster {
		t.Errorf("configured cluster: got %q, %v, want %q", got, err, scopeCluster)
	}
	if _, err := resolveScope(ctx, scopeNode, "n2", online, store, log); !errors.Is(err, errWrongNode) {
		t.Errorf("node scope with n1's credentials as n2: got %v, want errWrongNode", err)
	}
}

// auto refuses credentials that are not a node's, online and from a store
// an earlier version filled in cluster scope.
func TestResolveScopeAutoRefusesNonNode(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name   string
		ask    whoAmI
		stored string
	}{
		{"admin online", func(context.Context) (authenticationv1.UserInfo, error) {
			return authenticationv1.UserInfo{Username: "admin", Groups: []string{"system:masters"}}, nil
		}, ""},
		{"bootstrap token", func(context.Context) (authenticationv1.UserInfo, error) {
			return authenticationv1.UserInfo{Username: "system:bootstrap:abcdef", Groups: []string{"system:bootstrappers"}}, nil
		}, ""},
		{"stored cluster offline", func(context.Context) (authenticationv1.UserInfo, error) {
			return authenticationv1.UserInfo{}, errors.New("connection refused")
		}, scopeCluster},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, err := metastore.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			if tc.stored != "" {
				if err := store.PutMeta(ctx, scopeMetaKey, []byte(tc.stored)); err != nil {
					t.Fatal(err)
				}
			}
			got, err := resolveScope(ctx, scopeAuto, "n1", tc.ask, store, log)
			if !errors.Is(err, errNotNode) || !strings.Contains(err.Error(), "--sync-scope=cluster") {
				t.Fatalf("got %q, %v; want errNotNode naming --sync-scope=cluster", got, err)
			}
		})
	}
}

// Offline with nothing stored, auto waits for the cloud.
func TestResolveScopeWaitsForCloud(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	store, err := metastore.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	calls := 0
	ask := func(context.Context) (authenticationv1.UserInfo, error) {
		calls++
		if calls == 2 {
			cancel()
		}
		return authenticationv1.UserInfo{}, errors.New("connection refused")
	}
	_, err = resolveScope(ctx, scopeAuto, "n1", ask, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if !errors.Is(err, context.Canceled) || calls != 2 {
		t.Errorf("got %v after %d calls, want context.Canceled after 2", err, calls)
	}
}

// The cloud's answer is awaited within startupPatience only when startup
// can go on without it.
func TestResolveScopePatience(t *testing.T) {
	for _, tc := range []struct {
		name         string
		configured   string
		stored       bool
		wantDeadline bool
	}{
		{"auto with a stored choice", scopeAuto, true, true},
		{"auto with nothing stored", scopeAuto, false, false},
		{"node", scopeNode, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			store, err := metastore.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			if tc.stored {
				if err := store.PutMeta(ctx, scopeMetaKey, []byte(scopeCluster)); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			var deadline time.Time
			var hasDeadline bool
			ask := func(ctx context.Context) (authenticationv1.UserInfo, error) {
				deadline, hasDeadline = ctx.Deadline()
				cancel() // ends the wait for the cloud when nothing is stored
				return authenticationv1.UserInfo{}, errors.New("no answer")
			}
			_, _ = resolveScope(ctx, tc.configured, "n1", ask, store, slog.New(slog.DiscardHandler))
			if hasDeadline != tc.wantDeadline {
				t.Fatalf("ask had a deadline: got %v, want %v", hasDeadline, tc.wantDeadline)
			}
			if hasDeadline && deadline.After(start.Add(startupPatience+time.Second)) {
				t.Errorf("deadline %v after the start, want at most %v", deadline.Sub(start), startupPatience)
			}
		})
	}
}
