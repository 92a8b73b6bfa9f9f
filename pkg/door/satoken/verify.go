package satoken

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	tokenjwt "k8s.io/apiserver/pkg/authentication/token/jwt"
	"k8s.io/apiserver/pkg/authentication/user"
)

// Identity is the user a token authenticates, as a TokenReview names it.
type Identity struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
	// Expiry is the token's exp.
	Expiry time.Time
}

// Verify authenticates a service-account token bound to a pod this node
// holds. online says whether the cloud is reachable: only then may a
// token naming an unknown key or ServiceAccount cause a read of the
// cloud. The error wraps ErrNotLocal or ErrInvalid.
func (v *Verifier) Verify(ctx context.Context, token string, online bool) (Identity, error) {
	p, err := parse(token)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %w", ErrNotLocal, err)
	}
	if err := v.checkSignature(ctx, &p, online); err != nil {
		return Identity{}, err
	}
	now := v.cfg.Clock.Now()
	if err := v.checkClaims(p, now); err != nil {
		return Identity{}, err
	}
	if err := v.checkPod(p.private.Kubernetes, now); err != nil {
		return Identity{}, err
	}
	if err := v.checkServiceAccount(ctx, p.private.Kubernetes, now, online); err != nil {
		return Identity{}, err
	}
	return identityOf(p), nil
}

// checkSignature finds the token's key, refreshing the keys at most once
// per unknownKeyRefreshInterval while online, and verifies it.
func (v *Verifier) checkSignature(ctx context.Context, p *parsed, online bool) error {
	issuer, keys := v.keysFor(p.kid)
	if online && (len(keys) == 0 || issuer == "") {
		if err := v.refresh(ctx, unknownKeyRefreshInterval); err != nil {
			v.cfg.Logger.Info("read the cloud's service-account signing keys", "err", err)
		}
		issuer, keys = v.keysFor(p.kid)
	}
	switch {
	case issuer == "" || p.public.Issuer != issuer:
		return fmt.Errorf("%w: issuer %q is not the cloud's service-account issuer", ErrNotLocal, p.public.Issuer)
	case len(keys) == 0:
		return fmt.Errorf("%w: no signing key %q", ErrNotLocal, p.kid)
	}
	var errs []error
	for _, k := range keys {
		err := p.verify(k.Key)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("%w: signature: %w", ErrInvalid, errors.Join(errs...))
}

// checkClaims checks exp, nbf and iat with kube's leeway, the audiences
// and the claims kube's authenticator needs.
func (v *Verifier) checkClaims(p parsed, now time.Time) error {
	k := p.private.Kubernetes
	switch {
	case p.public.Expiry == nil:
		return fmt.Errorf("%w: token has no expiry (a legacy token)", ErrNotLocal)
	case k.Namespace == "" || k.Svcacct.Name == "" || k.Svcacct.UID == "":
		return fmt.Errorf("%w: token names no service account", ErrNotLocal)
	case k.Secret != nil || k.Pod == nil || k.Pod.Name == "" || k.Pod.UID == "":
		return fmt.Errorf("%w: token is not bound to a pod", ErrNotLocal)
	case p.public.Subject != serviceaccount.MakeUsername(k.Namespace, k.Svcacct.Name):
		return fmt.Errorf("%w: subject does not name the token's service account", ErrNotLocal)
	}
	if err := p.public.ValidateWithLeeway(jwt.Expected{Time: now}, jwt.DefaultLeeway); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if len(p.public.Audience) == 0 {
		return fmt.Errorf("%w: token has no audience", ErrNotLocal)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, a := range p.public.Audience {
		if slices.Contains(v.audiences, a) {
			return nil
		}
	}
	return fmt.Errorf("%w: no audience of the token is a known API audience", ErrNotLocal)
}

// checkPod checks the bound pod against the node's own pods, as kube's
// validator does against the cloud's: absent, another UID, or deleted
// more than the leeway ago refuses the token; a terminating pod's token
// stays valid through its grace period.
func (v *Verifier) checkPod(k kubernetesClaims, now time.Time) error {
	if k.Node != nil && k.Node.Name != v.cfg.NodeName {
		return fmt.Errorf("%w: token is bound to a pod on node %q", ErrNotLocal, k.Node.Name)
	}
	if v.cfg.Pods == nil {
		return fmt.Errorf("%w: the node's pods are not held", ErrNotLocal)
	}
	pod, err := v.cfg.Pods(k.Namespace, k.Pod.Name)
	switch {
	case errors.Is(err, ErrPodNotFound) && k.Node != nil:
		return fmt.Errorf("%w: bound pod %s/%s not found on this node", ErrInvalid, k.Namespace, k.Pod.Name)
	case err != nil:
		return fmt.Errorf("%w: bound pod %s/%s: %w", ErrNotLocal, k.Namespace, k.Pod.Name, err)
	case pod.UID != k.Pod.UID:
		return fmt.Errorf("%w: pod UID (%s) does not match the token's (%s)", ErrInvalid, pod.UID, k.Pod.UID)
	case deletedBefore(pod.DeletionTimestamp, now):
		return fmt.Errorf("%w: bound pod %s/%s has been deleted", ErrInvalid, k.Namespace, k.Pod.Name)
	}
	return nil
}

// deletedBefore reports whether a deletionTimestamp passed more than
// kube's leeway before now.
func deletedBefore(ts *time.Time, now time.Time) bool {
	return ts != nil && ts.Before(now.Add(-jwt.DefaultLeeway))
}

// identityOf is the user kube's authenticator returns for p
// (ServiceAccountInfo.UserInfo, then the system:authenticated group every
// authenticated request gets).
func identityOf(p parsed) Identity {
	k := p.private.Kubernetes
	info := serviceaccount.ServiceAccountInfo{Namespace: k.Namespace, Name: k.Svcacct.Name, UID: k.Svcacct.UID,
		PodName: k.Pod.Name, PodUID: k.Pod.UID, CredentialID: tokenjwt.CredentialIDForJTI(p.public.ID)}
	if k.Node != nil {
		info.NodeName, info.NodeUID = k.Node.Name, k.Node.UID
	}
	u := info.UserInfo()
	id := Identity{Name: u.GetName(), UID: u.GetUID(), Groups: append(slices.Clone(u.GetGroups()), user.AllAuthenticated),
		Extra: u.GetExtra(), Expiry: p.public.Expiry.Time()}
	return id
}
