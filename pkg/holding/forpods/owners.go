package forpods

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

// ownersKeyPrefix prefixes the meta key of each holding's owners.
const ownersKeyPrefix = "forpods/"

// OwnersKey is the meta key of the owners of the resource with key
// resource; inspect reads it.
func OwnersKey(resource string) string { return ownersKeyPrefix + resource }

// storedOwners is the stored form of a holding's owners.
type storedOwners struct {
	Owners []door.Pod `json:"owners"`
}

// saveLocked stores h's owners, or deletes them when none are left.
// Holdings.mu must be held.
func (m *Holdings) saveLocked(ctx context.Context, h *holding) error {
	key := OwnersKey(h.Resource.Key())
	if len(h.owners) == 0 {
		return m.cfg.Store.DeleteMeta(ctx, key)
	}
	s := storedOwners{}
	for _, p := range h.owners {
		s.Owners = append(s.Owners, p)
	}
	sort.Slice(s.Owners, func(i, j int) bool { return s.Owners[i].UID < s.Owners[j].UID })
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return m.cfg.Store.PutMeta(ctx, key, b)
}

// load reads every holding's stored owners. A stored value that does not
// parse counts as no owners: the holding is dropped, not trusted.
func (m *Holdings) load(ctx context.Context) error {
	for _, h := range m.byGVR {
		b, err := m.cfg.Store.GetMeta(ctx, OwnersKey(h.Resource.Key()))
		if errors.Is(err, metastore.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("load owners of %s: %w", h.Resource.Key(), err)
		}
		var s storedOwners
		if err := json.Unmarshal(b, &s); err != nil {
			m.log.Warn("stored owners unreadable; dropping the holding", "resource", h.Resource.Key(), "err", err)
			continue
		}
		m.mu.Lock()
		for _, p := range s.Owners {
			switch {
			case p.UID == "":
			case !m.cfg.Owners.Allows(p.Namespace, p.ServiceAccount):
				m.log.Info("stored owner's service account is not in pod-identity-owners; not holding for it",
					"resource", h.Resource.Key(), "pod", p.Namespace+"/"+p.Name, "serviceAccount", p.ServiceAccount)
			default:
				h.owners[p.UID] = p
			}
		}
		m.mu.Unlock()
	}
	return nil
}

// StoredServiceAccounts names the service accounts of stored owners
// (namespace/name, sorted, without repeats); nil for a value that does
// not parse.
func StoredServiceAccounts(value []byte) []string {
	var s storedOwners
	if json.Unmarshal(value, &s) != nil {
		return nil
	}
	h := &holding{owners: map[string]door.Pod{}}
	for _, p := range s.Owners {
		h.owners[p.UID] = p
	}
	return serviceAccountsLocked(h)
}
