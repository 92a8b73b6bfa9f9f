package main

import (
	"context"
	"log/slog"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/door/satoken"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/client-go/rest"
)

// newTokenVerifier wires the local verification of the node's pods'
// service-account tokens; nil when it is turned off.
func newTokenVerifier(ctx context.Context, cfg config, cloud *rest.Config, caches []*versioncache.Cache,
	store satoken.Store, log *slog.Logger) (*satoken.Verifier, error) {
	if !cfg.VerifyServiceAccountTokens {
		return nil, nil
	}
	return holding.NewVerifier(ctx, holding.VerifierConfig{NodeName: cfg.NodeName, Issuer: cfg.ServiceAccountIssuer,
		Audiences: cfg.APIAudiences, Cloud: cloud, Caches: caches, Store: store, Logger: log})
}

// localVerifier is v as the doors' interface: nil, not a typed nil.
func localVerifier(v *satoken.Verifier) door.LocalVerifier {
	if v == nil {
		return nil
	}
	return v
}
