package auth

import (
	"net/http/httptest"
	"testing"
)

func TestRequestAttributes(t *testing.T) {
	for _, tc := range []struct {
		method, target string
		want           attributes
	}{
		{"GET", "/api/v1/namespaces/a/configmaps/c",
			attributes{ResourceRequest: true, Verb: "get", Version: "v1", Resource: "configmaps", Namespace: "a", Name: "c"}},
		{"GET", "/api/v1/namespaces/a/pods?labelSelector=x%3Dy",
			attributes{ResourceRequest: true, Verb: "list", Version: "v1", Resource: "pods", Namespace: "a", LabelSelector: "x=y"}},
		{"GET", "/api/v1/namespaces/a/secrets?watch=true&fieldSelector=metadata.name%3Ds",
			attributes{ResourceRequest: true, Verb: "watch", Version: "v1", Resource: "secrets", Namespace: "a", Name: "s",
				FieldSelector: "metadata.name=s"}},
		{"GET", "/api/v1/watch/namespaces/a/pods",
			attributes{ResourceRequest: true, Verb: "watch", Version: "v1", Resource: "pods", Namespace: "a"}},
		{"GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1",
			attributes{ResourceRequest: true, Verb: "list", Version: "v1", Resource: "pods", FieldSelector: "spec.nodeName=n1"}},
		{"POST", "/apis/apps/v1/namespaces/a/deployments",
			attributes{ResourceRequest: true, Verb: "create", Group: "apps", Version: "v1", Resource: "deployments", Namespace: "a"}},
		{"PUT", "/api/v1/namespaces/a/pods/p/status",
			attributes{ResourceRequest: true, Verb: "update", Version: "v1", Resource: "pods", Subresource: "status",
				Namespace: "a", Name: "p"}},
		{"DELETE", "/api/v1/namespaces/a/configmaps",
			attributes{ResourceRequest: true, Verb: "deletecollection", Version: "v1", Resource: "configmaps", Namespace: "a"}},
		{"GET", "/api/v1/namespaces/a",
			attributes{ResourceRequest: true, Verb: "get", Version: "v1", Resource: "namespaces", Namespace: "a", Name: "a"}},
		{"GET", "/api/v1/nodes/n1",
			attributes{ResourceRequest: true, Verb: "get", Version: "v1", Resource: "nodes", Name: "n1"}},
		{"GET", "/version", attributes{Path: "/version", Verb: "get"}},
		{"GET", "/api", attributes{Path: "/api", Verb: "get"}},
		{"GET", "/apis/apps", attributes{Path: "/apis/apps", Verb: "get"}},
		{"POST", "/metrics", attributes{Path: "/metrics", Verb: "post"}},
	} {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			if got := requestAttributes(httptest.NewRequest(tc.method, tc.target, nil)); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
