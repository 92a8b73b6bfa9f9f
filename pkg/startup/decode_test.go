package startup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

// Stored objects decode in their stored order whether one goroutine or
// several decode them, and undecodable ones are skipped wherever they are.
func TestDecodeObjects(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		bad  []int // indexes of undecodable objects
	}{
		{"empty", 0, nil},
		{"small, inline", 10, []int{3}},
		{"large, split", 5*minDecodeShare + 7, []int{0, minDecodeShare, 3 * minDecodeShare, 5*minDecodeShare + 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := map[int]bool{}
			for _, i := range tc.bad {
				bad[i] = true
			}
			stored := make([]metastore.Object, tc.n)
			var want []string
			for i := range stored {
				name := fmt.Sprintf("cm-%05d", i)
				stored[i] = storedObject(mustObject(t, cm("a", name, uint64(i+1), "x")))
				if bad[i] {
					stored[i].Raw = []byte("{not json")
					continue
				}
				want = append(want, name)
			}
			got := decodeObjects(stored, slog.New(slog.DiscardHandler))
			if len(got) != len(want) {
				t.Fatalf("got %d objects, want %d", len(got), len(want))
			}
			for i, o := range got {
				if o.Name != want[i] {
					t.Fatalf("object %d: got %s, want %s", i, o.Name, want[i])
				}
			}
		})
	}
}

// inParallel covers every index once, whatever the split.
func TestInParallel(t *testing.T) {
	for _, n := range []int{0, 1, minDecodeShare, 2*minDecodeShare + 1, 10 * minDecodeShare} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			seen := make([]int, n)
			inParallel(n, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					seen[i]++
				}
			})
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("index %d: visited %d times, want once", i, c)
				}
			}
		})
	}
}

// A failed restore reports the failure that cancelled the others, not a
// cancellation.
func TestFirstCause(t *testing.T) {
	cause := errors.New("decode info: bad")
	canceled := fmt.Errorf("restore x: %w", context.Canceled)
	for _, tc := range []struct {
		name string
		errs []error
		want error
	}{
		{"none", []error{nil, nil}, nil},
		{"cause after cancellations", []error{nil, canceled, cause, canceled}, cause},
		{"cancellations only", []error{nil, canceled}, canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := firstCause(tc.errs); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
