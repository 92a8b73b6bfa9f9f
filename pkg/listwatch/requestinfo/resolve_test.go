package requestinfo

import (
	"net/http/httptest"
	"testing"
)

func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		method, target string
		want           Attributes
	}{
		{"GET", "/api/v1/namespaces/a/configmaps/c",
			Attributes{ResourceRequest: true, Verb: "get", Version: "v1", Resource: "configmaps", Namespace: "a", Name: "c"}},
		{"GET", "/api/v1/namespaces/a/pods?labelSelector=x%3Dy",
			Attributes{ResourceRequest: true, Verb: "list", Version: "v1", Resource: "pods", Namespace: "a", LabelSelector: "x=y"}},
		{"GET", "/api/v1/namespaces/a/secrets?watch=true&fieldSelector=metadata.name%3Ds",
			Attributes{ResourceRequest: true, Verb: "watch", Version: "v1", Resource: "secrets", Namespace: "a", Name: "s",
				FieldSelector: "metadata.name=s"}},
		{"GET", "/api/v1/namespaces/a/pods?watch=yes",
			Attributes{ResourceRequest: true, Verb: "watch", Version: "v1", Resource: "pods", Namespace: "a"}},
		{"GET", "/api/v1/namespaces/a/pods?watch=t",
			Attributes{ResourceRequest: true, Verb: "watch", Version: "v1", Resource: "pods", Namespace: "a"}},
		{"GET", "/api/v1/namespaces/a/pods?watch=on",
			Attributes{ResourceRequest: true, Verb: "watch", Version: "v1", Resource: "pods", Namespace: "a"}},
		{"GET", "/api/v1/namespaces/a/pods?watch=false",
			Attributes{ResourceRequest: true, Verb: "list", Version: "v1", Resource: "pods", Namespace: "a"}},
		{"GET", "/api/v1/watch/namespaces/a/pods",
			Attributes{ResourceRequest: true, Verb: "watch", Version: "v1", Resource: "pods", Namespace: "a"}},
		{"GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1",
			Attributes{ResourceRequest: true, Verb: "list", Version: "v1", Resource: "pods", FieldSelector: "spec.nodeName=n1"}},
		{"POST", "/apis/apps/v1/namespaces/a/deployments",
			Attributes{ResourceRequest: true, Verb: "create", Group: "apps", Version: "v1", Resource: "deployments", Namespace: "a"}},
		{"PUT", "/api/v1/namespaces/a/pods/p/status",
			Attributes{ResourceRequest: true, Verb: "update", Version: "v1", Resource: "pods", Subresource: "status",
				Namespace: "a", Name: "p"}},
		{"DELETE", "/api/v1/namespaces/a/configmaps",
			Attributes{ResourceRequest: true, Verb: "deletecollection", Version: "v1", Resource: "configmaps", Namespace: "a"}},
		{"GET", "/api/v1/namespaces/a",
			Attributes{ResourceRequest: true, Verb: "get", Version: "v1", Resource: "namespaces", Namespace: "a", Name: "a"}},
		{"GET", "/api/v1/nodes/n1",
			Attributes{ResourceRequest: true, Verb: "get", Version: "v1", Resource: "nodes", Name: "n1"}},
		{"GET", "/version", Attributes{Path: "/version", Verb: "get"}},
		{"GET", "/api", Attributes{Path: "/api", Verb: "get"}},
		{"GET", "/apis/apps", Attributes{Path: "/apis/apps", Verb: "get"}},
		{"POST", "/metrics", Attributes{Path: "/metrics", Verb: "post"}},
		{"OPTIONS", "/version", Attributes{Path: "/version", Verb: "options"}},
		{"OPTIONS", "/api/v1/namespaces/a/configmaps", Attributes{ResourceRequest: true, Version: "v1", Resource: "configmaps", Namespace: "a"}},
		{"HEAD", "/api/v1/namespaces/a/configmaps/c",
			Attributes{ResourceRequest: true, Verb: "get", Version: "v1", Resource: "configmaps", Namespace: "a", Name: "c"}},
	} {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			if got := Resolve(httptest.NewRequest(tc.method, tc.target, nil)); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestLongRunning(t *testing.T) {
	for _, tc := range []struct {
		method, target string
		want           bool
	}{
		{"GET", "/api/v1/namespaces/a/pods?watch=yes", true},
		{"GET", "/api/v1/namespaces/a/pods?watch=1", true},
		{"GET", "/api/v1/watch/pods", true},
		{"GET", "/api/v1/namespaces/a/pods", false},
		{"GET", "/api/v1/namespaces/a/pods/p", false},
		{"GET", "/api/v1/namespaces/a/pods/p/log?follow=true", true},
		{"POST", "/api/v1/namespaces/a/pods/p/exec", true},
		{"POST", "/api/v1/namespaces/a/pods/p/attach", true},
		{"POST", "/api/v1/namespaces/a/pods/p/portforward", true},
		{"GET", "/api/v1/namespaces/a/services/s/proxy/x", true},
		{"PUT", "/api/v1/namespaces/a/pods/p/status", false},
		{"GET", "/debug/pprof/profile", true},
		{"GET", "/version", false},
	} {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			if got := LongRunning(Resolve(httptest.NewRequest(tc.method, tc.target, nil))); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}
