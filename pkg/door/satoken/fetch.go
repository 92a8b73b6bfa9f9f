package satoken

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
)

const (
	// jwksPath is where kube-apiserver publishes its service-account
	// public keys; it is read from the kubeconfig's server, never from the
	// discovery document's jwks_uri, which may name another host.
	jwksPath = "/openid/v1/jwks"
	// discoveryPath is kube-apiserver's OpenID discovery document; only
	// its issuer is read.
	discoveryPath = "/.well-known/openid-configuration"
	// ownRetryInterval is how long the daemon's own credentials are not
	// tried after the cloud refused them the keys.
	ownRetryInterval = 24 * time.Hour
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
// mint, if set. After a refusal the daemon's credentials are not tried
// again for ownRetryInterval, so that a node with no pod to mint for
// costs the cloud nothing while it waits for one.
func CloudFetcher(cloud *rest.Config, mint Minter, clk clock.PassiveClock) (Fetcher, error) {
	own, err := kubernetes.NewForConfig(cloud)
	if err != nil {
		return nil, fmt.Errorf("keys client: %w", err)
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	var mu sync.Mutex
	var refusedAt time.Time // guarded by mu; when the cloud refused the daemon's credentials
	return func(ctx context.Context) (Published, error) {
		mu.Lock()
		tryOwn := mint == nil || refusedAt.IsZero() || clk.Since(refusedAt) >= ownRetryInterval
		mu.Unlock()
		if tryOwn {
			pub, err := readPublished(ctx, own.Discovery().RESTClient())
			if err == nil || mint == nil || !(apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)) {
				return pub, err
			}
			mu.Lock()
			refusedAt = clk.Now()
			mu.Unlock()
		}
		return readWithMinted(ctx, cloud, mint)
	}, nil
}

// readWithMinted reads what the cloud publishes on a token from mint.
func readWithMinted(ctx context.Context, cloud *rest.Config, mint Minter) (Published, error) {
	minted, err := mint(ctx)
	if err != nil {
		return Published{}, err
	}
	cfg := rest.AnonymousClientConfig(cloud)
	cfg.BearerToken = minted.Token
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return Published{}, fmt.Errorf("keys client: %w", err)
	}
	// The client has no certificate, so its connection is not the
	// node's: closed when done, it does not stay open beside the node's,
	// answering the cloud transport's HTTP/2 PINGs, until the cloud's idle
	// timeout (90 s), at every start and every keyRefreshInterval.
	defer utilnet.CloseIdleConnectionsFor(hc.Transport)
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return Published{}, fmt.Errorf("keys client: %w", err)
	}
	pub, err := readPublished(ctx, cs.Discovery().RESTClient())
	pub.Audiences = minted.Audiences
	return pub, err
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
