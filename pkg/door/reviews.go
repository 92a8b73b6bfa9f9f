package door

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// The reviews' rate in all, apart from the sync loop's: a burst of new
// callers after a restart is reviewed without delaying the sync, and the
// sync never waits behind reviews (see ReviewBudget).
const (
	reviewQPS   = 50
	reviewBurst = 100
)

// ReviewClients are the TokenReview and SubjectAccessReview clients of
// the doors.
type ReviewClients struct {
	Tokens authenticationclient.TokenReviewInterface
	Access authorizationclient.SubjectAccessReviewInterface
}

// NewReviewClients returns review clients on their own connection. Their
// rate (reviewQPS, reviewBurst) is a ReviewBudget's, which refuses at once
// rather than wait, so the clients' own limiter is off: no request holds a
// slot waiting for it. A review is never retried on the cloud's 429: the
// caller is answered 503 with Retry-After at once instead.
func NewReviewClients(cloud *rest.Config) (ReviewClients, error) {
	cfg := rest.CopyConfig(cloud)
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	cfg.ContentType = "application/json"
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	authn, err := restFor(cfg, authenticationv1.SchemeGroupVersion)
	if err != nil {
		return ReviewClients{}, err
	}
	authz, err := restFor(cfg, authorizationv1.SchemeGroupVersion)
	if err != nil {
		return ReviewClients{}, err
	}
	return ReviewClients{Tokens: tokenReviews{authn}, Access: accessReviews{authz}}, nil
}

func restFor(cfg *rest.Config, gv schema.GroupVersion) (rest.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("review client: %w", err)
	}
	return rc, nil
}

type tokenReviews struct{ c rest.Interface }

func (t tokenReviews) Create(ctx context.Context, tr *authenticationv1.TokenReview, _ metav1.CreateOptions) (*authenticationv1.TokenReview, error) {
	out := &authenticationv1.TokenReview{}
	err := t.c.Post().Resource("tokenreviews").Body(tr).MaxRetries(0).Do(ctx).Into(out)
	return out, err
}

type accessReviews struct{ c rest.Interface }

func (a accessReviews) Create(ctx context.Context, sar *authorizationv1.SubjectAccessReview, _ metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error) {
	out := &authorizationv1.SubjectAccessReview{}
	err := a.c.Post().Resource("subjectaccessreviews").Body(sar).MaxRetries(0).Do(ctx).Into(out)
	return out, err
}
