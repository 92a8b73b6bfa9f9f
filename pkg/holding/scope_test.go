package holding

import (
	"context"
	"errors"
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
		{"this node", authenticationv1.UserInfo{Username: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"}}, ScopeNode, ""},
		{"node name without the group", authenticationv1.UserInfo{Username: "system:node:n1", Groups: []string{"system:authenticated"}}, ScopeCluster, ""},
		{"admin", authenticationv1.UserInfo{Username: "admin", Groups: []string{"system:masters"}}, ScopeCluster, ""},
		{"another node", authenticationv1.UserInfo{Username: "system:node:n2", Groups: []string{"system:nodes"}}, "", `node "n2", but node-name is "n1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := scopeOf(tt.user, "n1")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrWrongNode) {
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
	store := openStore(t, "")
	log := slog.New(slog.DiscardHandler)
	offline := func(context.Context) (authenticationv1.UserInfo, error) {
		return authenticationv1.UserInfo{}, errors.New("connection refused")
	}
	if got, check, err := Resolve(ctx, ScopeAuto, "n1", nodeAnswers("n1"), store, log); err != nil || got != ScopeNode || check != nil {
		t.Fatalf("online: got %q, check %v, %v, want %q without a check", got, check != nil, err, ScopeNode)
	}
	if got, _, err := Resolve(ctx, ScopeAuto, "n1", offline, store, log); err != nil || got != ScopeNode {
		t.Errorf("offline restart: got %q, %v, want the stored %q", got, err, ScopeNode)
	}
	if got, check, err := Resolve(ctx, ScopeCluster, "n1", nodeAnswers("n1"), store, log); err != nil || got != ScopeCluster || check != nil {
		t.Errorf("configured cluster: got %q, check %v, %v, want %q without a check", got, check != nil, err, ScopeCluster)
	}
}

// nodeAnswers answers a SelfSubjectReview as node's credentials, or for
// node "" as an admin's.
func nodeAnswers(node string) WhoAmI {
	return func(context.Context) (authenticationv1.UserInfo, error) {
		if node == "" {
			return authenticationv1.UserInfo{Username: "admin", Groups: []string{"system:masters"}}, nil
		}
		return authenticationv1.UserInfo{Username: "system:node:" + node, Groups: []string{"system:nodes"}}, nil
	}
}

// auto refuses credentials that are not a node's, online and from a store
// an earlier version filled in cluster scope.
func TestResolveScopeAutoRefusesNonNode(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name   string
		ask    WhoAmI
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
		}, ScopeCluster},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := openStore(t, tc.stored)
			got, _, err := Resolve(ctx, ScopeAuto, "n1", tc.ask, store, log)
			if !errors.Is(err, ErrNotNode) || !strings.Contains(err.Error(), "--sync-scope=cluster") {
				t.Fatalf("got %q, %v; want ErrNotNode naming --sync-scope=cluster", got, err)
			}
		})
	}
}

// Offline with nothing stored, auto waits for the cloud.
func TestResolveScopeWaitsForCloud(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	store := openStore(t, "")
	calls := 0
	ask := func(context.Context) (authenticationv1.UserInfo, error) {
		calls++
		if calls == 2 {
			cancel()
		}
		return authenticationv1.UserInfo{}, errors.New("connection refused")
	}
	_, _, err := Resolve(ctx, ScopeAuto, "n1", ask, store, slog.New(slog.DiscardHandler))
	if !errors.Is(err, context.Canceled) || calls != 2 {
		t.Errorf("got %v after %d calls, want context.Canceled after 2", err, calls)
	}
}

// A restart that can go on without the cloud does not wait for it: the
// scope comes at once, and its check asks the cloud afterwards.
func TestResolveScopeDoesNotWaitForCloud(t *testing.T) {
	for _, tc := range []struct {
		name       string
		configured string
		stored     string // "" for nothing stored
		node       string // the node the credentials belong to
		want       string
		wantErr    error // of the check once the cloud answers
		wantStored string
	}{
		{"auto, stored choice confirmed", ScopeAuto, ScopeNode, "n1", ScopeNode, nil, ScopeNode},
		{"auto, stored node, credentials not a node's", ScopeAuto, ScopeNode, "", ScopeNode, ErrNotNode, ScopeNode},
		{"node, own credentials", ScopeNode, "", "n1", ScopeNode, nil, ""},
		{"node, another node's credentials", ScopeNode, "", "n2", ScopeNode, ErrWrongNode, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			store := openStore(t, tc.stored)
			answer := make(chan struct{}) // the cloud answers once closed
			ask := func(ctx context.Context) (authenticationv1.UserInfo, error) {
				<-answer
				return nodeAnswers(tc.node)(ctx)
			}
			got, check, err := Resolve(ctx, tc.configured, "n1", ask, store, slog.New(slog.DiscardHandler))
			if err != nil || got != tc.want || check == nil {
				t.Fatalf("got %q, check %v, %v, want %q with a check", got, check != nil, err, tc.want)
			}
			done := make(chan error, 1)
			go func() {
				done <- check(ctx, func() { t.Errorf("unconfirmed: called, want the cloud's answer awaited") })
			}()
			select {
			case err := <-done:
				t.Fatalf("check: got %v before the cloud answered, want it waiting", err)
			case <-time.After(StartupPatience / 2):
			}
			close(answer)
			if err := <-done; !errors.Is(err, tc.wantErr) {
				t.Errorf("check: got %v, want %v", err, tc.wantErr)
			}
			if stored, _ := store.GetMeta(context.Background(), MetaKey); string(stored) != tc.wantStored {
				t.Errorf("stored scope: got %q, want %q", stored, tc.wantStored)
			}
		})
	}
}

// A cloud that does not answer at first lets the sync go on unconfirmed,
// and its later answer is still checked.
func TestScopeCheckUnanswered(t *testing.T) {
	ctx := context.Background()
	store := openStore(t, "")
	calls := 0
	ask := func(ctx context.Context) (authenticationv1.UserInfo, error) {
		if calls++; calls == 1 {
			return authenticationv1.UserInfo{}, errors.New("connection refused")
		}
		return nodeAnswers("n2")(ctx)
	}
	unconfirmed := 0
	check := checkScope(ScopeNode, ScopeNode, "n1", ask, store, slog.New(slog.DiscardHandler))
	if err := check(ctx, func() { unconfirmed++ }); !errors.Is(err, ErrWrongNode) {
		t.Errorf("check: got %v, want ErrWrongNode from the later answer", err)
	}
	if unconfirmed != 1 || calls != 2 {
		t.Errorf("got %d unconfirmed calls after %d asks, want 1 after 2", unconfirmed, calls)
	}
}

// openStore opens a store in a temporary dir, closed when the test ends,
// with scope stored as an earlier choice unless it is empty.
func openStore(t *testing.T, scope string) *metastore.Store {
	t.Helper()
	store, err := metastore.Open(context.Background(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if scope != "" {
		if err := store.PutMeta(context.Background(), MetaKey, []byte(scope)); err != nil {
			t.Fatal(err)
		}
	}
	return store
}
