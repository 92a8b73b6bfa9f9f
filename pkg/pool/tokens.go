package pool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"golang.org/x/oauth2"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/transport"
	"k8s.io/utils/clock"
)

const (
	// mintTimeout bounds one TokenRequest for the election's token.
	mintTimeout = 30 * time.Second
	// renewFraction of a token's life passes before it is renewed, as the
	// kubelet renews projected tokens at 80 %.
	renewFraction = 0.8
)

// ErrNoPoolPod means the node holds no running pod of the pool service
// account, so it has no token to take part in the election with.
var ErrNoPoolPod = errors.New("no pod of the pool's service account on this node")

// Pod is the pool service account's pod on this node, whose token the
// election runs on.
type Pod struct {
	Namespace, Name, UID, ServiceAccount string
}

// Minter requests a token for pod's service account, bound to pod, with
// the node's credentials (forpods.NodeMinter).
type Minter func(ctx context.Context, pod Pod) (token string, expires time.Time, err error)

// PodFinder returns the first pod (by namespace/name) of serviceAccount in
// namespace that the node's pods cache holds and is not being deleted.
func PodFinder(pods *versioncache.Cache, namespace, serviceAccount string) func() (Pod, bool) {
	pred := versioncache.Predicate{Namespace: namespace,
		Field: fields.OneTermEqualSelector("spec.serviceAccountName", serviceAccount)}
	return func() (Pod, bool) {
		objs, _, err := pods.List(pred)
		if err != nil {
			return Pod{}, false
		}
		for _, o := range objs {
			var meta struct {
				Metadata struct {
					UID               string  `json:"uid"`
					DeletionTimestamp *string `json:"deletionTimestamp"`
				} `json:"metadata"`
			}
			if json.Unmarshal(o.Raw, &meta) == nil && meta.Metadata.UID != "" && meta.Metadata.DeletionTimestamp == nil {
				return Pod{Namespace: o.Namespace, Name: o.Name, UID: meta.Metadata.UID, ServiceAccount: serviceAccount}, true
			}
		}
		return Pod{}, false
	}
}

// Tokens is the election's credential: tokens minted for the pool
// service account's pod on this node, cached and renewed at
// renewFraction of their life, or at once after a reset (a 401).
func Tokens(find func() (Pod, bool), mint Minter, clk clock.PassiveClock) transport.ResettableTokenSource {
	return transport.NewCachedTokenSource(&podTokens{find: find, mint: mint, clock: clk})
}

// podTokens mints one token per call.
type podTokens struct {
	find  func() (Pod, bool)
	mint  Minter
	clock clock.PassiveClock
}

func (p *podTokens) Token() (*oauth2.Token, error) {
	pod, ok := p.find()
	if !ok {
		return nil, ErrNoPoolPod
	}
	ctx, cancel := context.WithTimeout(context.Background(), mintTimeout)
	defer cancel()
	tok, expires, err := p.mint(ctx, pod)
	if err != nil {
		return nil, fmt.Errorf("pool election token: %w", err)
	}
	now := p.clock.Now()
	renew := now.Add(time.Duration(float64(expires.Sub(now)) * renewFraction))
	return &oauth2.Token{AccessToken: tok, TokenType: "Bearer", Expiry: renew}, nil
}
