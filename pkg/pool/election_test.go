package pool

import (
	"context"
	"io"
	"log/slog"
	"math"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/leaderelection"
)

// fast are durations short enough for a test; client-go's loop takes no
// clock, so the election runs on real time against a fake cloud.
var fast = durations{lease: 2 * time.Second, renew: time.Second, retry: 100 * time.Millisecond}

const waitFor = 10 * time.Second

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func member(t *testing.T, cs *fake.Clientset, node, addr string) *Elector {
	t.Helper()
	e, err := newElector(Config{Pool: "site-a", Namespace: "apiserver-lite-pool", Self: Holder{node, addr},
		Leases: cs.CoordinationV1(), Logger: quiet()}, fast)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// run starts e until the returned cancel; cancel waits for Run to return.
func run(t *testing.T, e *Elector) (cancel func()) {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = e.Run(ctx) }()
	cancel = func() { stop(); <-done }
	t.Cleanup(cancel)
	return cancel
}

// waitLeader waits until e names want as leader (self: whether e is it).
func waitLeader(t *testing.T, e *Elector, want Holder, self bool) {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		got, ok, leading, changed := e.Leader()
		if ok && got == want && leading == self {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%s: leader %+v (known %v, self %v), want %+v (self %v)", e.cfg.Self.Node, got, ok, leading, want, self)
		}
	}
}

func TestElectionOneLeaderThenFailover(t *testing.T) {
	cs := fake.NewClientset()
	a, b := member(t, cs, "edge-a", "10.0.0.1:10552"), member(t, cs, "edge-b", "10.0.0.2:10552")
	stopA := run(t, a)
	waitLeader(t, a, a.cfg.Self, true)
	run(t, b)
	waitLeader(t, b, a.cfg.Self, false)

	lease, err := cs.CoordinationV1().Leases("apiserver-lite-pool").Get(context.Background(), "pool-site-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := *lease.Spec.HolderIdentity, "edge-a@10.0.0.1:10552"; got != want {
		t.Errorf("holderIdentity = %q, want %q", got, want)
	}
	if got, want := *lease.Spec.LeaseDurationSeconds, int32(fast.lease/time.Second); got != want {
		t.Errorf("leaseDurationSeconds = %d, want %d", got, want)
	}

	stopA() // releases the Lease (ReleaseOnCancel)
	if _, _, leading, _ := a.Leader(); leading {
		t.Error("a still leads after it stopped")
	}
	waitLeader(t, b, b.cfg.Self, true)
}

func TestElectionLeaseNamingNoMember(t *testing.T) {
	cs := fake.NewClientset()
	garbage, secs, now := "not-a-member", int32(3600), metav1.NowMicro()
	_, err := cs.CoordinationV1().Leases("apiserver-lite-pool").Create(context.Background(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apiserver-lite-pool", Name: "pool-site-a"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &garbage, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := member(t, cs, "edge-b", "10.0.0.2:10552")
	b.mu.Lock()
	b.leader = Holder{"stale", "10.0.0.9:1"} // a leader known before
	b.mu.Unlock()
	_, _, _, changed := b.Leader()
	run(t, b)
	select {
	case <-changed:
	case <-time.After(waitFor):
		t.Fatal("the Lease was never observed")
	}
	if got, ok, leading, _ := b.Leader(); ok || leading {
		t.Errorf("Leader() = %+v, known %v, self %v; want no leader for holder %q", got, ok, leading, garbage)
	}
}

func TestPinnedDurationsAreValid(t *testing.T) {
	e, err := New(Config{Pool: "site-a", Namespace: "apiserver-lite-pool", Self: Holder{"edge-a", "10.0.0.1:10552"},
		Leases: fake.NewClientset().CoordinationV1(), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if e.d != (durations{LeaseDuration, RenewDeadline, RetryPeriod}) {
		t.Errorf("New runs with %+v, want the pinned durations", e.d)
	}
	cfg := e.electionConfig()
	if cfg.LeaseDuration != 30*time.Second || cfg.RenewDeadline != 20*time.Second || cfg.RetryPeriod != 10*time.Second {
		t.Errorf("election durations %v/%v/%v, want 30s/20s/10s", cfg.LeaseDuration, cfg.RenewDeadline, cfg.RetryPeriod)
	}
	if _, err := leaderelection.NewLeaderElector(cfg); err != nil {
		t.Errorf("client-go refuses the pinned durations: %v", err)
	}
}

func TestElectionRequestsPerSecond(t *testing.T) {
	for _, tc := range []struct {
		members int
		want    float64
	}{{0, 0}, {1, 0.1}, {10, 0.1 + 9.0/16}, {50, 0.1 + 49.0/16}} {
		t.Run("", func(t *testing.T) {
			if got := ElectionRequestsPerSecond(tc.members); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("ElectionRequestsPerSecond(%d) = %v, want %v", tc.members, got, tc.want)
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	ok := Config{Pool: "site-a", Namespace: "apiserver-lite-pool", Self: Holder{"edge-a", "10.0.0.1:10552"},
		Leases: fake.NewClientset().CoordinationV1(), Logger: quiet()}
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"pool not a label", func(c *Config) { c.Pool = "Site_A" }},
		{"empty pool", func(c *Config) { c.Pool = "" }},
		{"namespace", func(c *Config) { c.Namespace = "a/b" }},
		{"self without port", func(c *Config) { c.Self.Address = "10.0.0.1" }},
		{"no client", func(c *Config) { c.Leases = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			if _, err := New(c); err == nil {
				t.Errorf("New accepted %+v", c)
			}
		})
	}
	if _, err := New(ok); err != nil {
		t.Errorf("New refused a good config: %v", err)
	}
}
