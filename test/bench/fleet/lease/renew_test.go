//go:build e2e

package lease

import (
	"context"
	"errors"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// scriptedLeases answers each Update with the next of updates (nil: the
// Lease written), and every Get with the stored Lease.
type scriptedLeases struct {
	updates []error
	gets    int
}

func (s *scriptedLeases) Get(context.Context, string, metav1.GetOptions) (*coordinationv1.Lease, error) {
	s.gets++
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: "2"}}, nil
}

func (s *scriptedLeases) Create(context.Context, *coordinationv1.Lease, metav1.CreateOptions) (*coordinationv1.Lease, error) {
	return nil, errors.New("unexpected create")
}

func (s *scriptedLeases) Update(_ context.Context, l *coordinationv1.Lease, _ metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	if len(s.updates) == 0 {
		return nil, errors.New("no more answers")
	}
	err := s.updates[0]
	s.updates = s.updates[1:]
	if err != nil {
		return nil, err
	}
	return l, nil
}

type countingFailer struct{ failed, retried int }

func (c *countingFailer) Fail(string, error) { c.failed++ }
func (c *countingFailer) Retried(string)     { c.retried++ }

func TestRenewRetriesAsTheKubelet(t *testing.T) {
	cut := errors.New("write tcp: write: broken pipe")
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "n", errors.New("modified"))
	for _, tt := range []struct {
		name                              string
		updates                           []error
		wantFailed, wantRetried, wantGets int
	}{
		{"renewed at once", []error{nil}, 0, 0, 0},
		{"a write cut, then renewed", []error{cut, nil}, 0, 1, 0},
		{"a Conflict reads the Lease again", []error{conflict, nil}, 0, 1, 1},
		{"every attempt failed", []error{cut, cut, cut, cut, cut}, 1, 4, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			leases, f := &scriptedLeases{updates: tt.updates}, &countingFailer{}
			held := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: "1"}}
			got := renew(context.Background(), leases, "n", held, f)
			if f.failed != tt.wantFailed || f.retried != tt.wantRetried || leases.gets != tt.wantGets {
				t.Errorf("got %d failed, %d retried, %d reads; want %d, %d, %d",
					f.failed, f.retried, leases.gets, tt.wantFailed, tt.wantRetried, tt.wantGets)
			}
			if (got == nil) != (tt.wantFailed > 0) {
				t.Errorf("got Lease %v after %d failures, want one only when renewed", got, f.failed)
			}
		})
	}
}
