package door

import (
	"fmt"
	"net/http"

	"k8s.io/client-go/rest"
)

// Forwarder builds round trippers that act as a caller in the cloud.
type Forwarder struct {
	// base reaches the cloud with its CA but no credentials: no client
	// certificate, since kube-apiserver lets a client certificate win
	// over a bearer token.
	base http.RoundTripper
}

// NewForwarder returns a Forwarder for the cloud of cloud, without any of
// cloud's credentials.
func NewForwarder(cloud *rest.Config) (*Forwarder, error) {
	anon := rest.AnonymousClientConfig(cloud)
	rt, err := rest.TransportFor(anon)
	if err != nil {
		return nil, fmt.Errorf("caller transport: %w", err)
	}
	return &Forwarder{base: rt}, nil
}

// For returns a round tripper that sends token as the bearer token.
func (f *Forwarder) For(token string) http.RoundTripper {
	return &bearerRoundTripper{token: token, base: f.base}
}

// bearerRoundTripper sets the caller's token on every request, replacing
// any Authorization header copied from the local request.
type bearerRoundTripper struct {
	token string
	base  http.RoundTripper
}

func (b *bearerRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}
