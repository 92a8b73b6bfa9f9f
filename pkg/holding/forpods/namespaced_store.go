package forpods

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"golang.org/x/oauth2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
)

// nsOwnersPrefix prefixes the meta key of each namespaced holding's
// owners; the value names the resource too, so a restart finds them.
const nsOwnersPrefix = "forpods-ns/"

// nsOwnersKey is the meta key of the owners of the namespaced holding
// with resource key resource.
func nsOwnersKey(resource string) string { return nsOwnersPrefix + resource }

// storedNamespaced is the stored form of a namespaced holding.
type storedNamespaced struct {
	Group     string     `json:"group"`
	Version   string     `json:"version"`
	Resource  string     `json:"resource"`
	Namespace string     `json:"namespace"`
	Owners    []door.Pod `json:"owners"`
}

// RestoredHolding is a namespaced holding an earlier run stored.
type RestoredHolding struct {
	Resource cloudsync.Resource
	Owners   []door.Pod
	// Cache is restored by the caller from the store.
	Cache *versioncache.Cache
}

// MetaLister lists meta values under a prefix; *metastore.Store does.
type MetaLister interface {
	MetaWithPrefix(ctx context.Context, prefix string) (map[string][]byte, error)
}

// StoredNamespaced returns the namespaced holdings an earlier run stored,
// without caches. A value that does not parse, or names another key, is
// skipped: its state is dropped as unconfigured.
func StoredNamespaced(ctx context.Context, store MetaLister) ([]RestoredHolding, error) {
	vals, err := store.MetaWithPrefix(ctx, nsOwnersPrefix)
	if err != nil {
		return nil, fmt.Errorf("stored namespaced holdings: %w", err)
	}
	var out []RestoredHolding
	for k, v := range vals {
		var s storedNamespaced
		if json.Unmarshal(v, &s) != nil || s.Namespace == "" || s.Version == "" || s.Resource == "" {
			continue
		}
		r := cloudsync.Resource{GVR: schema.GroupVersionResource{Group: s.Group, Version: s.Version, Resource: s.Resource},
			Namespace: s.Namespace, ForPods: true}
		if nsOwnersKey(r.Key()) != k {
			continue
		}
		out = append(out, RestoredHolding{Resource: r, Owners: s.Owners})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource.Key() < out[j].Resource.Key() })
	return out, nil
}

// saveLocked stores h's owners, or deletes them when none are left.
// m.mu must be held.
func (m *Namespaced) saveLocked(ctx context.Context, h *nsHolding) error {
	key := nsOwnersKey(h.res.Key())
	if len(h.owners) == 0 {
		return m.cfg.Store.DeleteMeta(ctx, key)
	}
	s := storedNamespaced{Group: h.res.GVR.Group, Version: h.res.GVR.Version, Resource: h.res.GVR.Resource,
		Namespace: h.res.Namespace, Owners: sortedOwners(h.owners)}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return m.cfg.Store.PutMeta(ctx, key, b)
}

// sortedOwners are owners by UID.
func sortedOwners(owners map[string]door.Pod) []door.Pod {
	out := make([]door.Pod, 0, len(owners))
	for _, p := range owners {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UID < out[j].UID })
	return out
}

// dropStored removes resource's rows, watermark and owners (ownersKey),
// forgets cache, and scrubs the write-ahead log.
func dropStored(ctx context.Context, store Store, clk clock.Clock, resource, ownersKey string, cache *versioncache.Cache) error {
	if err := store.Drop(ctx, resource); err != nil {
		return fmt.Errorf("drop %s: %w", resource, err)
	}
	if err := store.DeleteMeta(ctx, ownersKey); err != nil {
		return fmt.Errorf("delete owners of %s: %w", resource, err)
	}
	cache.Forget()
	var err error
	for range scrubAttempts {
		if err = store.Scrub(ctx); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-clk.After(scrubRetry):
		}
	}
	return fmt.Errorf("scrub: %w", err)
}

// nsTokens requests a namespaced holding's tokens, each bound to one of
// its owners: the first, by UID, whose token the cloud grants.
type nsTokens struct {
	m *Namespaced
	h *nsHolding
}

// Token requests a token for an owner of the holding.
func (t *nsTokens) Token() (*oauth2.Token, error) {
	t.m.mu.Lock()
	owners := sortedOwners(t.h.owners)
	t.m.mu.Unlock()
	err := errNoOwner
	for _, pod := range owners {
		ctx, cancel := context.WithTimeout(context.Background(), mintTimeout)
		token, expires, merr := t.m.cfg.Mint(ctx, pod)
		cancel()
		if merr != nil {
			err = merr
			continue
		}
		t.m.mu.Lock()
		t.h.identity = pod.Namespace + "/" + pod.Name
		t.m.mu.Unlock()
		now := t.m.cfg.Clock.Now()
		renew := now.Add(time.Duration(float64(expires.Sub(now)) * renewFraction))
		return &oauth2.Token{AccessToken: token, TokenType: "Bearer", Expiry: renew}, nil
	}
	return nil, err
}

// nsServiceAccountsLocked names h's owners' service accounts, sorted and
// without repeats. Namespaced.mu must be held.
func nsServiceAccountsLocked(h *nsHolding) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range h.owners {
		if sa := p.Namespace + "/" + p.ServiceAccount; !seen[sa] {
			seen[sa] = true
			out = append(out, sa)
		}
	}
	sort.Strings(out)
	return out
}

// NamespacedOwnersKey is the meta key of the owners of the namespaced
// holding with resource key resource; inspect reads it. It is "" for a
// key that is not a namespaced holding's.
func NamespacedOwnersKey(resource string) string {
	_, q, _ := strings.Cut(resource, "?")
	v, err := url.ParseQuery(q)
	if err != nil || v.Get("forPods") != "true" || v.Get("namespace") == "" {
		return ""
	}
	return nsOwnersKey(resource)
}

// StoredNamespacedHolding reports a stopped daemon's namespaced holding of
// resource key key from its stored owners (value); false for a value
// that does not parse.
func StoredNamespacedHolding(key string, value []byte) (NamespacedHolding, bool) {
	var s storedNamespaced
	if json.Unmarshal(value, &s) != nil {
		return NamespacedHolding{}, false
	}
	h := &nsHolding{owners: map[string]door.Pod{}}
	gvr := schema.GroupVersionResource{Group: s.Group, Version: s.Version, Resource: s.Resource}
	out := NamespacedHolding{Resource: gvrString(gvr), Namespace: s.Namespace, Key: key,
		Scope: ScopeNamespace}
	for _, p := range s.Owners {
		h.owners[p.UID] = p
		out.Pods = append(out.Pods, p.Namespace+"/"+p.Name)
	}
	out.ServiceAccounts = nsServiceAccountsLocked(h)
	return out, true
}
