package cloudsync

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// pagedLW answers LIST requests by continue token ("" for the first page,
// "full" for a restart without one) and records the tokens asked for.
type pagedLW struct {
	mu    sync.Mutex
	asked []string
	pages map[string]func() (runtime.Object, error)
}

func (p *pagedLW) lw() cache.ListerWatcherWithContext {
	return &cache.ListWatch{ListWithContextFunc: func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
		tok := o.Continue
		if tok == "" && o.Limit == 0 {
			tok = "full"
		}
		p.mu.Lock()
		p.asked = append(p.asked, tok)
		p.mu.Unlock()
		return p.pages[tok]()
	}}
}

// rawPage is a LIST page of configmaps named names at rv, continued by next.
func rawPage(rv uint64, next string, names ...string) func() (runtime.Object, error) {
	var items []string
	for i, n := range names {
		items = append(items, fmt.Sprintf(`{"metadata":{"namespace":"ns","name":%q,"resourceVersion":"%d"}}`, n, i+1))
	}
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"%d","continue":%q},"items":[%s]}`,
		rv, next, strings.Join(items, ","))
	return func() (runtime.Object, error) { return decodeList([]byte(body)) }
}

func failWith(err error) func() (runtime.Object, error) {
	return func() (runtime.Object, error) { return nil, err }
}

func TestListPages(t *testing.T) {
	errCloud := errors.New("cloud down")
	tests := []struct {
		name      string
		pages     map[string]func() (runtime.Object, error)
		want      string // names listed, or the error wanted
		wantRV    uint64
		wantAsked string
	}{
		{
			name: "pages in order",
			pages: map[string]func() (runtime.Object, error){
				"": rawPage(10, "c1", "a", "b"), "c1": rawPage(11, "c2", "c"), "c2": rawPage(12, "", "d"),
			},
			want: "a b c d", wantRV: 10, wantAsked: ",c1,c2",
		},
		{
			name: "expired continue restarts in one request",
			pages: map[string]func() (runtime.Object, error){
				"": rawPage(10, "c1", "a"), "c1": failWith(apierrors.NewResourceExpired("gone")),
				"full": rawPage(20, "", "a", "b", "e"),
			},
			want: "a b e", wantRV: 20, wantAsked: ",c1,full",
		},
		{
			name: "failed page",
			pages: map[string]func() (runtime.Object, error){
				"": rawPage(10, "c1", "a"), "c1": failWith(errCloud),
			},
			want: "cloud down", wantAsked: ",c1",
		},
		{
			name: "bad item",
			pages: map[string]func() (runtime.Object, error){
				"": rawPage(10, "", "a", ""),
			},
			want: "missing metadata.name", wantAsked: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &pagedLW{pages: tt.pages}
			s := &Syncer{cfg: Config{ListerWatcher: p.lw()}}
			objs, rv, err := s.list(context.Background())
			var got string
			if err != nil {
				got = err.Error()
			} else {
				var names []string
				for _, o := range objs {
					names = append(names, o.Name)
				}
				got = strings.Join(names, " ")
			}
			if !strings.Contains(got, tt.want) || rv != tt.wantRV {
				t.Errorf("got %q at %d, want %q at %d", got, rv, tt.want, tt.wantRV)
			}
			if asked := strings.Join(p.asked, ","); asked != tt.wantAsked {
				t.Errorf("got requests %q, want %q", asked, tt.wantAsked)
			}
		})
	}
}
