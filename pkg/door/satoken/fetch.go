package satoken

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	// jwksPath is where kube-apiserver publishes its service-account
	// public keys; it is read from the kubeconfig's server, never from the
	// discovery document's jwks_uri, which may name another host.
	jwksPath = "/openid/v1/jwks"
	// discoveryPath is kube-apiserver's OpenID discovery document; only
	// its issuer is read.
	discoveryPath = "/.well-known/openid-configuration"
)

// Minted is a token the cloud issued on request, with the audiences the
// cloud gave it: asked for none, it names the cloud's API audiences.
type Minted struct {
	Token     string
	Audiences []string
}

// Minter returns a token the cloud admits to its discovery endpoints:
// the node mints one for a service account of one of its pods, which the
// default system:service-account-issuer-discovery binding admits.
type Minter func(ctx context.Context) (Minted, error)

// CloudFetcher reads the issuer and keys from cloud's server: with the
// daemon's own credentials, and when the cloud refuses them (a node is
// not in that binding unless the operator adds it) with a token from
// mint, if set.
func CloudFetcher(cloud *rest.Config, mint Minter) (Fetcher, error) {
	own, err := kubernetes.NewForConfig(cloud)
	if err != nil {
		return nil, fmt.Errorf("keys client: %w", err)
	}
	return func(ctx context.Context) (Published, error) {
		pub, err := readPublished(ctx, own.Discovery().RESTClient())
		if err == nil || mint == nil || !(apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)) {
			return pub, err
		}
		minted, merr := mint(ctx)
		if merr != nil {
			return Published{}, errors.Join(err, merr)
		}
		cfg := rest.AnonymousClientConfig(cloud)
		cfg.BearerToken = minted.Token
		cs, cerr := kubernetes.NewForConfig(cfg)
		if cerr != nil {
			return Published{}, fmt.Errorf("keys client: %w", cerr)
		}
		pub, err = readPublished(ctx, cs.Discovery().RESTClient())
		pub.Audiences = minted.Audiences
		return pub, err
	}, nil
}

// readPublished reads the discovery document's issuer and the key set.
func readPublished(ctx context.Context, c rest.Interface) (Published, error) {
	doc, err := c.Get().AbsPath(discoveryPath).DoRaw(ctx)
	if err != nil {
		return Published{}, fmt.Errorf("read %s: %w", discoveryPath, err)
	}
	var d struct {
		Issuer string `json:"issuer"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return Published{}, fmt.Errorf("parse %s: %w", discoveryPath, err)
	}
	keys, err := c.Get().AbsPath(jwksPath).DoRaw(ctx)
	if err != nil {
		return Published{}, fmt.Errorf("read %s: %w", jwksPath, err)
	}
	return Published{Issuer: d.Issuer, JWKS: keys}, nil
}

// CloudServiceAccounts reads ServiceAccounts with cloud's credentials:
// kube's Node authorizer lets a node get those of its pods.
func CloudServiceAccounts(cloud *rest.Config) (ServiceAccountGetter, error) {
	cs, err := kubernetes.NewForConfig(cloud)
	if err != nil {
		return nil, fmt.Errorf("service account client: %w", err)
	}
	return func(ctx context.Context, ns, name string) (ServiceAccount, error) {
		sa, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return ServiceAccount{}, err
		}
		out := ServiceAccount{UID: string(sa.UID)}
		if sa.DeletionTimestamp != nil {
			t := sa.DeletionTimestamp.Time
			out.DeletionTimestamp = &t
		}
		return out, nil
	}, nil
}
