package forpods

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// AnyServiceAccount in an owners entry allows every service account of
// its namespace.
const AnyServiceAccount = "*"

// DefaultOwners is pod-identity-owners by default: the namespaces the
// node's system components run in (kube-proxy and CoreDNS in kube-system,
// flannel's and Calico's agents in their own).
var DefaultOwners = []string{"kube-system/*", "kube-flannel/*", "calico-system/*"}

// Allowed are the service accounts whose pods may own a cluster-wide
// holding, and so be its sync identity (pod-identity-owners). Other pods
// may still read a held resource, authorized per caller, but never start
// a holding nor sync it. The zero value allows none. Immutable.
type Allowed struct {
	// accounts maps a namespace to its allowed service accounts;
	// AnyServiceAccount allows them all.
	accounts map[string]map[string]bool
	entries  []string
}

// ParseAllowed parses entries of the form namespace/serviceaccount, or
// namespace/* for every service account of a namespace.
func ParseAllowed(entries []string) (Allowed, error) {
	a := Allowed{accounts: map[string]map[string]bool{}}
	for _, e := range entries {
		ns, sa, err := parseOwnerEntry(e)
		if err != nil {
			return Allowed{}, fmt.Errorf("pod-identity-owners: %w", err)
		}
		if a.accounts[ns] == nil {
			a.accounts[ns] = map[string]bool{}
		}
		if !a.accounts[ns][sa] {
			a.accounts[ns][sa] = true
			a.entries = append(a.entries, ns+"/"+sa)
		}
	}
	return a, nil
}

// parseOwnerEntry splits namespace/serviceaccount and checks both names
// as kube-apiserver does.
func parseOwnerEntry(e string) (namespace, serviceAccount string, err error) {
	ns, sa, ok := strings.Cut(e, "/")
	if !ok || strings.Contains(sa, "/") {
		return "", "", fmt.Errorf("%q: want namespace/serviceaccount or namespace/*", e)
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return "", "", fmt.Errorf("%q: namespace: %s", e, strings.Join(errs, "; "))
	}
	if sa == AnyServiceAccount {
		return ns, sa, nil
	}
	if errs := validation.IsDNS1123Subdomain(sa); len(errs) > 0 {
		return "", "", fmt.Errorf("%q: service account: %s", e, strings.Join(errs, "; "))
	}
	return ns, sa, nil
}

// Allows reports whether pods of the service account namespace/name may
// own a cluster-wide holding.
func (a Allowed) Allows(namespace, name string) bool {
	sas := a.accounts[namespace]
	return sas[AnyServiceAccount] || (name != "" && sas[name])
}

// Entries are the parsed entries, in order, without repeats.
func (a Allowed) Entries() []string { return append([]string(nil), a.entries...) }
