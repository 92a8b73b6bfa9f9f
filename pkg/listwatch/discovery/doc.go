// Package discovery serves the non-resource documents clients read before
// anything else: /api, /apis, /apis/{group}[/{version}] (legacy and
// aggregated apidiscovery.k8s.io/v2) and /version. While the cloud link is
// up they are the cloud's, so clients see every resource the proxy
// reaches; otherwise, or when the cloud request fails, they are built from
// the configured caches' discovery info and the cloud's last known
// version.
package discovery
