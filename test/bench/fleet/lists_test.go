//go:build e2e

package fleet

import (
	"testing"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

func auditedList(user, resource, uri string) framework.AuditEvent {
	return audited("list", user, resource, uri)
}

func audited(verb, user, resource, uri string) framework.AuditEvent {
	e := framework.AuditEvent{Verb: verb, RequestURI: uri}
	e.User.Username = user
	e.ObjectRef = &struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	}{Resource: resource}
	return e
}

// answered sets e's response code.
func answered(e framework.AuditEvent, code int) framework.AuditEvent {
	e.ResponseStatus = &struct {
		Code int `json:"code"`
	}{Code: code}
	return e
}

func TestRebootListsOf(t *testing.T) {
	const n0, n1 = "system:node:fleet-000", "system:node:fleet-001"
	check := func(user, resource string) framework.AuditEvent {
		return auditedList(user, resource, "/api/v1/"+resource+"?limit=1")
	}
	for _, tt := range []struct {
		name   string
		events []framework.AuditEvent
		want   rebootLists
	}{
		{"the change's new objects only", []framework.AuditEvent{
			auditedList(n0, "secrets", "/api/v1/namespaces/fleet/secrets?fieldSelector=metadata.name%3Dfleet-000-d"),
			auditedList(n0, "configmaps", "/api/v1/namespaces/fleet/configmaps?fieldSelector=metadata.name%3Dfleet-000-d"),
		}, rebootLists{newLists: 2}},
		{"the change's new objects refused, then listed", []framework.AuditEvent{
			answered(auditedList(n0, "secrets", "/api/v1/namespaces/fleet/secrets?fieldSelector=metadata.name%3Dfleet-000-d"), 403),
			answered(auditedList(n0, "secrets", "/api/v1/namespaces/fleet/secrets?fieldSelector=metadata.name%3Dfleet-000-d"), 429),
			answered(auditedList(n0, "secrets", "/api/v1/namespaces/fleet/secrets?fieldSelector=metadata.name%3Dfleet-000-d"), 200),
		}, rebootLists{newLists: 3, newForbidden: 1, newThrottled: 1}},
		{"an old reference listed", []framework.AuditEvent{
			auditedList(n0, "secrets", "/api/v1/namespaces/fleet/secrets?fieldSelector=metadata.name%3Dfleet-000-0"),
		}, rebootLists{single: 1}},
		{"a held object streamed", []framework.AuditEvent{
			audited("watch", n0, "secrets", "/api/v1/namespaces/fleet/secrets?allowWatchBookmarks=true&fieldSelector=metadata.name%3Dfleet-000-0&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true"),
		}, rebootLists{streams: 1}},
		{"the change's new object streamed, a held one resumed", []framework.AuditEvent{
			audited("watch", n0, "secrets", "/api/v1/namespaces/fleet/secrets?allowWatchBookmarks=true&fieldSelector=metadata.name%3Dfleet-000-d&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true"),
			audited("watch", n0, "secrets", "/api/v1/namespaces/fleet/secrets?allowWatchBookmarks=true&fieldSelector=metadata.name%3Dfleet-000-0&resourceVersion=42&watch=true"),
		}, rebootLists{newLists: 1}},
		{"a collection", []framework.AuditEvent{
			auditedList(n0, "pods", "/api/v1/pods?fieldSelector=spec.nodeName%3Dfleet-000&limit=500"),
		}, rebootLists{collection: 1}},
		{"one check per node", []framework.AuditEvent{
			check(n0, "pods"), check(n1, "nodes"),
		}, rebootLists{maxChecks: 1, maxChecksOf: n0 + " pods"}},
		{"two checks of one node's resources", []framework.AuditEvent{
			check(n0, "pods"), check(n1, "pods"), check(n1, "nodes"),
		}, rebootLists{maxChecks: 2, maxChecksOf: n1 + " pods, nodes"}},
		{"a check refused with 429, then answered", []framework.AuditEvent{
			answered(check(n0, "csidrivers"), 429), check(n0, "csidrivers"),
		}, rebootLists{maxChecks: 1, maxChecksOf: n0 + " csidrivers", checksThrottled: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := rebootListsOf(tt.events, "d"); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
