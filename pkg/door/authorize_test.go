package door

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

type authzRig struct {
	cloud *fakeCloud
	store *memStore
	link  *switchable
	clock *clocktesting.FakeClock
}

func newAuthzRig(t *testing.T) *authzRig {
	rig := &authzRig{cloud: newFakeCloud(t), store: newMemStore(), link: &switchable{},
		clock: clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))}
	rig.link.on.Store(true)
	return rig
}

func (rig *authzRig) authorizer(t *testing.T) *Authorizer {
	return NewAuthorizer(AuthorizerConfig{Reviews: rig.cloud.sarClient(t), Store: rig.store,
		Connected: rig.link.connected, OfflineGrace: DefaultOfflineAuthzGrace, Clock: rig.clock,
		Held: func(a attributes) bool { return a.ResourceRequest }})
}

var (
	alice     = User{Name: "alice", Groups: []string{"devs"}}
	getConfig = attributes{ResourceRequest: true, Verb: "get", Version: "v1", Resource: "configmaps", Namespace: "a", Name: "c"}
)

func TestAuthorizeCacheTTL(t *testing.T) {
	for _, tc := range []struct {
		name    string
		allowed bool
		ttl     time.Duration
	}{
		{name: "allowed", allowed: true, ttl: allowedTTL},
		{name: "denied", allowed: false, ttl: deniedTTL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rig := newAuthzRig(t)
			rig.cloud.allow = func(authorizationv1.SubjectAccessReviewSpec) bool { return tc.allowed }
			z := rig.authorizer(t)
			ask := func(wantSARs int32) {
				t.Helper()
				d, err := z.authorize(context.Background(), alice, getConfig)
				if err != nil || d.Allowed != tc.allowed {
					t.Fatalf("got %+v, %v; want allowed=%v", d, err, tc.allowed)
				}
				if got := rig.cloud.sars.Load(); got != wantSARs {
					t.Fatalf("got %d reviews, want %d", got, wantSARs)
				}
			}
			ask(1)
			rig.clock.Step(tc.ttl - time.Second)
			ask(1)
			rig.clock.Step(time.Second)
			ask(2)
		})
	}
}

func TestAuthorizeSendsExactAttributes(t *testing.T) {
	rig := newAuthzRig(t)
	z := rig.authorizer(t)
	a := attributes{ResourceRequest: true, Verb: "watch", Group: "apps", Version: "v1", Resource: "deployments",
		Subresource: "status", Namespace: "a", Name: "d", FieldSelector: "metadata.name=d", LabelSelector: "x=y"}
	if _, err := z.authorize(context.Background(), alice, a); err != nil {
		t.Fatal(err)
	}
	got := rig.cloud.lastSAR
	ra := got.ResourceAttributes
	if got.User != "alice" || len(got.Groups) != 1 || ra == nil || ra.Verb != "watch" || ra.Group != "apps" ||
		ra.Resource != "deployments" || ra.Subresource != "status" || ra.Namespace != "a" || ra.Name != "d" ||
		ra.FieldSelector == nil || ra.FieldSelector.RawSelector != "metadata.name=d" ||
		ra.LabelSelector == nil || ra.LabelSelector.RawSelector != "x=y" {
		t.Fatalf("got SAR spec %+v / %+v, want the request's exact attributes", got, ra)
	}
}

func TestAuthorizeOffline(t *testing.T) {
	rig := newAuthzRig(t)
	rig.cloud.allow = func(authorizationv1.SubjectAccessReviewSpec) bool { return true }
	if _, err := rig.authorizer(t).authorize(context.Background(), alice, getConfig); err != nil {
		t.Fatal(err)
	}
	rig.link.on.Store(false)
	other := getConfig
	other.Name = "other"
	for _, tc := range []struct {
		name    string
		step    time.Duration
		a       attributes
		wantErr error
	}{
		{name: "within grace", step: DefaultOfflineAuthzGrace - time.Minute, a: getConfig},
		{name: "never asked", a: other, wantErr: errNoDecision},
		{name: "past grace", step: time.Minute + time.Second, a: getConfig, wantErr: errNoDecision},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rig.clock.Step(tc.step)
			d, err := rig.authorizer(t).authorize(context.Background(), alice, tc.a) // fresh memory: the store answers
			if !errors.Is(err, tc.wantErr) || (err == nil && !d.Allowed) {
				t.Fatalf("got %+v, %v; want err %v", d, err, tc.wantErr)
			}
		})
	}
	if got := rig.cloud.sars.Load(); got != 1 {
		t.Fatalf("got %d reviews, want 1 (none offline)", got)
	}
}

func TestAuthorizeCloudErrorWhileOnline(t *testing.T) {
	rig := newAuthzRig(t)
	rig.cloud.allow = func(authorizationv1.SubjectAccessReviewSpec) bool { return true }
	if _, err := rig.authorizer(t).authorize(context.Background(), alice, getConfig); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		code    int32
		wantErr error
	}{{500, nil}, {429, errCloudBusy}} {
		rig.cloud.failWith.Store(tc.code)
		d, err := rig.authorizer(t).authorize(context.Background(), alice, getConfig) // fresh memory, stored decision
		if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
			t.Fatalf("status %d while online: got %+v, %v; want an error (%v), never the stored decision", tc.code, d, err, tc.wantErr)
		}
	}
}

func TestAuthorizeStoresOnlyAllowedReads(t *testing.T) {
	rig := newAuthzRig(t)
	rig.cloud.allow = func(s authorizationv1.SubjectAccessReviewSpec) bool {
		return s.ResourceAttributes.Verb == "get" || s.ResourceAttributes.Verb == "create"
	}
	z := rig.authorizer(t)
	list := attributes{ResourceRequest: true, Verb: "list", Version: "v1", Resource: "secrets", Namespace: "a"}
	for i := range 100 { // denied lists with distinct selectors
		a := list
		a.LabelSelector = fmt.Sprintf("app=x%d", i)
		if d, err := z.authorize(context.Background(), alice, a); err != nil || d.Allowed {
			t.Fatalf("got %+v, %v; want denied", d, err)
		}
	}
	create := getConfig
	create.Verb, create.Name = "create", ""
	if d, err := z.authorize(context.Background(), alice, create); err != nil || !d.Allowed {
		t.Fatalf("create: got %+v, %v; want allowed", d, err)
	}
	if got := len(rig.store.m); got != 0 {
		t.Fatalf("got %d stored decisions after denials and a write, want 0", got)
	}
	if _, err := z.authorize(context.Background(), alice, getConfig); err != nil {
		t.Fatal(err)
	}
	if got := len(rig.store.m); got != 1 {
		t.Fatalf("got %d stored decisions after an allowed read, want 1", got)
	}
}

func TestAuthorizeNormalizesSelectors(t *testing.T) {
	rig := newAuthzRig(t)
	rig.cloud.allow = func(authorizationv1.SubjectAccessReviewSpec) bool { return true }
	z := rig.authorizer(t)
	list := attributes{ResourceRequest: true, Verb: "list", Version: "v1", Resource: "pods", Namespace: "a"}
	for _, sel := range [][2]string{{"b=2,a=1", "spec.nodeName=n,metadata.name=p"}, {"a=1, b=2", "metadata.name==p,spec.nodeName=n"}} {
		a := list
		a.LabelSelector, a.FieldSelector = sel[0], sel[1]
		if _, err := z.authorize(context.Background(), alice, a); err != nil {
			t.Fatal(err)
		}
	}
	if got := rig.cloud.sars.Load(); got != 2 {
		t.Fatalf("got %d reviews for one question with reordered selectors, want 2 (it and its sibling watch)", got)
	}
}

func TestAuthorizeAsksSiblingVerb(t *testing.T) {
	rig := newAuthzRig(t)
	rig.cloud.allow = func(s authorizationv1.SubjectAccessReviewSpec) bool {
		return s.ResourceAttributes.Resource == "endpointslices"
	}
	watch := attributes{ResourceRequest: true, Verb: "watch", Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
	if d, err := rig.authorizer(t).authorize(context.Background(), alice, watch); err != nil || !d.Allowed {
		t.Fatalf("online watch: got %+v, %v; want allowed", d, err)
	}
	rig.link.on.Store(false)
	list := watch
	list.Verb = "list"
	if d, err := rig.authorizer(t).authorize(context.Background(), alice, list); err != nil || !d.Allowed {
		t.Fatalf("offline list after an online watch: got %+v, %v; want the sibling's stored decision", d, err)
	}
	if got := rig.cloud.sars.Load(); got != 2 {
		t.Fatalf("got %d reviews, want 2 (the watch and its sibling list)", got)
	}
}

// TestAuthorizeSharesConcurrentReviews checks that the requests of one
// decision arriving before its answer share one review.
func TestAuthorizeSharesConcurrentReviews(t *testing.T) {
	const callers = 20
	rig := newAuthzRig(t)
	gate := make(chan struct{})
	rig.cloud.allow = func(authorizationv1.SubjectAccessReviewSpec) bool { <-gate; return false }
	z := rig.authorizer(t)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			if d, err := z.authorize(context.Background(), alice, getConfig); err != nil || d.Allowed {
				t.Errorf("got %+v, %v; want denied", d, err)
			}
		})
	}
	deadline := time.Now().Add(5 * time.Second)
	for rig.cloud.sars.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the other callers reach the review, or the cloud
	close(gate)
	wg.Wait()
	if got := rig.cloud.sars.Load(); got != 1 {
		t.Errorf("got %d reviews for %d concurrent requests of one decision, want 1", got, callers)
	}
}
