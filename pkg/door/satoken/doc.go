// Package satoken verifies the cloud's service-account tokens on the node,
// as kube-apiserver's own service-account authenticator does (claims in
// the "kubernetes.io" private claim, signature against the service-account
// signing keys, issuer, audiences, exp and nbf with kube's leeway, the
// bound pod and the ServiceAccount's UID), so that the node's own pods'
// tokens need no TokenReview, online or offline.
//
// Invariants:
//   - A token is accepted only when every check passes locally; when a
//     check cannot be made here (another issuer, an unknown key or
//     audience, a token bound to no pod, a pod on another node, a
//     ServiceAccount never seen) Verify returns ErrNotLocal and the caller
//     asks the cloud (or refuses while offline). ErrInvalid is returned
//     only for what kube would refuse too.
//   - The identity built is the one kube's authenticator builds (k8s.io/
//     apiserver's ServiceAccountInfo.UserInfo plus system:authenticated),
//     equal to a TokenReview's answer for the same token.
//   - Keys come only from the kubeconfig's server (/openid/v1/jwks), never
//     from a discovery document's jwks_uri. They are public; they are kept
//     in the injected Store and used offline. A token naming an unknown
//     key triggers at most one refresh per unknownKeyRefreshInterval.
//   - Signatures are checked by go-jose v4 only; no cryptography here.
//
// The package imports nothing of the project's; it is a leaf.
package satoken
