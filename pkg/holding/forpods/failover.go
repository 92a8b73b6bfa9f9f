package forpods

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/transport"
)

// A holding syncs on one owner's tokens at a time, its sync identity: the
// same owner while the cloud accepts it, else the next by pod UID. An
// owner the cloud refuses (a 4xx to its TokenRequest: its pod or service
// account deleted, or a pod whose token NodeRestriction will not mint; a
// 401 or 403 to the sync on its token) stops being an owner; it becomes
// one again only by reading again. With no owner left the holding is
// orphaned as when its pods leave, and while the cloud is reachable its
// reads are forwarded (Current). A refused pod does not own the holding
// again while it stays on the node (its volumes and service account do
// not change); its reads are still served, authorized per request.

// ownerRefused reports whether err is the cloud refusing to mint a token
// for an owner, as opposed to failing to answer: any 4xx except 429
// (Too Many Requests), which says to come back later.
func ownerRefused(err error) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return false
	}
	code := int(st.Status().Code)
	return code >= http.StatusBadRequest && code < http.StatusInternalServerError && code != http.StatusTooManyRequests
}

// nextIdentity returns the owner to mint h's next token for: the current
// identity while it is an owner, else the owner with the lowest UID.
func (m *Holdings) nextIdentity(h *holding) (door.Pod, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := h.owners[h.identity.UID]; ok && h.identity.UID != "" {
		return h.identity, true
	}
	uids := make([]string, 0, len(h.owners))
	for uid := range h.owners {
		uids = append(uids, uid)
	}
	if len(uids) == 0 {
		return door.Pod{}, false
	}
	sort.Strings(uids)
	return h.owners[uids[0]], true
}

// setIdentity records that h's sync now runs on token, minted for pod.
func (m *Holdings) setIdentity(h *holding, pod door.Pod, token string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h.identity.UID != pod.UID {
		m.log.Info("sync identity of a holding", "resource", h.Resource.Key(),
			"pod", pod.Namespace+"/"+pod.Name, "serviceAccount", pod.Namespace+"/"+pod.ServiceAccount)
	}
	h.identity, h.identityToken = pod, token
}

// dropOwner removes pod from h's owners because the cloud refused it.
func (m *Holdings) dropOwner(h *holding, pod door.Pod, why string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropOwnerLocked(h, pod, why, err)
}

// dropOwnerLocked is dropOwner with Holdings.mu held.
func (m *Holdings) dropOwnerLocked(h *holding, pod door.Pod, why string, err error) {
	if _, ok := h.owners[pod.UID]; !ok {
		return
	}
	delete(h.owners, pod.UID)
	h.refused[pod.UID] = pod
	if h.identity.UID == pod.UID {
		h.identity, h.identityToken = door.Pod{}, ""
	}
	m.log.Warn("no longer holding for a pod: "+why+"; failing over to the next owner", "resource", h.Resource.Key(),
		"pod", pod.Namespace+"/"+pod.Name, "serviceAccount", pod.Namespace+"/"+pod.ServiceAccount, "owners", len(h.owners), "err", err)
	if m.runCtx == nil {
		return
	}
	if serr := m.saveLocked(m.runCtx, h); serr != nil {
		m.log.Warn("owners of a holding not stored", "resource", h.Resource.Key(), "err", serr)
	}
}

// refused is told the cloud answered code (401 or 403) to h's sync on
// token. If token is the current identity's, that owner is dropped and
// refused reports true: the next request needs a token for another.
func (m *Holdings) refused(h *holding, token string, code int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if token == "" || token != h.identityToken {
		return false // an older token's answer; the current one may be fine
	}
	m.dropOwnerLocked(h, h.identity, "the cloud refused the sync on its token",
		fmt.Errorf("%d %s", code, http.StatusText(code)))
	return true
}

// Current reports whether the resource of gvr is held and kept current:
// its sync runs on an identity the cloud accepts. While it is not and the
// cloud is reachable, reads of it go to the cloud rather than to what is
// held.
func (m *Holdings) Current(gvr schema.GroupVersionResource) bool {
	h := m.byGVR[gvr]
	if h == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return h.run != nil && h.identityToken != ""
}

// syncTokens is one running sync's token source: client-go's cache over
// podTokens, told by the sync's transport when the cloud refuses a token.
type syncTokens struct {
	transport.ResettableTokenSource
	m *Holdings
	h *holding
}

// Refused drops the identity the refused token was minted for and makes
// the next request mint for the next owner.
func (s *syncTokens) Refused(token string, code int) {
	if s.m.refused(s.h, token, code) {
		// client-go's cache compares with the wall clock it fetched by.
		s.ResetTokenOlderThan(time.Now().Add(time.Second))
	}
}

// Identity is the owner pod whose token the sync uses now; ok false
// before the first token or after a refusal.
func (s *syncTokens) Identity() (pod door.Pod, ok bool) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	return s.h.identity, s.h.identityToken != ""
}

// bearerOf is the bearer token of an outgoing request; "" for none.
func bearerOf(r *http.Request) string {
	t, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return t
}
