package scope

import (
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

func mustSynced(t *testing.T, ns, label, field string) Synced {
	t.Helper()
	s, err := New(ns, label, field)
	if err != nil {
		t.Fatalf("New(%q, %q, %q): %v", ns, label, field, err)
	}
	return s
}

func req(ns, name, label, field string) Request {
	r := Request{Namespace: ns, Name: name}
	if label != "" {
		r.Label, _ = labels.Parse(label)
	}
	if field != "" {
		r.Field = fields.ParseSelectorOrDie(field)
	}
	return r
}

func TestCovers(t *testing.T) {
	pods := mustSynced(t, "", "", "spec.nodeName=node-a")
	nodes := mustSynced(t, "", "", "metadata.name=node-a")
	leases := mustSynced(t, "kube-node-lease", "", "")
	labelled := mustSynced(t, "", "tier=edge", "")
	notOther := mustSynced(t, "", "", "spec.nodeName!=node-b")
	whole := mustSynced(t, "", "", "")
	tests := []struct {
		name   string
		synced Synced
		req    Request
		want   bool
	}{
		{"whole resource, any list", whole, req("", "", "", ""), true},
		{"whole resource, any get", whole, req("default", "x", "", ""), true},
		{"kubelet's pods", pods, req("", "", "", "spec.nodeName=node-a"), true},
		{"kubelet's pods in a namespace, narrowed", pods, req("default", "", "app=web", "spec.nodeName=node-a,status.phase=Running"), true},
		{"kubelet's pods with ==", pods, req("", "", "", "spec.nodeName==node-a"), true},
		{"all pods", pods, req("", "", "", ""), false},
		{"another node's pods", pods, req("", "", "", "spec.nodeName=node-b"), false},
		{"pods not on another node", pods, req("", "", "", "spec.nodeName!=node-b"), false},
		{"a pod by name", pods, req("default", "web", "", ""), false},
		{"own node by name", nodes, req("", "node-a", "", ""), true},
		{"other node by name", nodes, req("", "node-b", "", ""), false},
		{"own node by field", nodes, req("", "", "", "metadata.name=node-a"), true},
		{"all nodes", nodes, req("", "", "", ""), false},
		{"leases in the synced namespace", leases, req("kube-node-lease", "", "", ""), true},
		{"a lease in the synced namespace", leases, req("kube-node-lease", "node-a", "", ""), true},
		{"leases everywhere", leases, req("", "", "", ""), false},
		{"leases by namespace field", leases, req("", "", "", "metadata.namespace=kube-node-lease"), true},
		{"leases in another namespace", leases, req("default", "", "", ""), false},
		{"label synced, same label", labelled, req("", "", "tier=edge,app=x", ""), true},
		{"label synced, no label", labelled, req("", "", "", ""), false},
		{"label synced, a get", labelled, req("default", "x", "", ""), false},
		{"!= synced, same !=", notOther, req("", "", "", "spec.nodeName!=node-b"), true},
		{"!= synced, exact other value", notOther, req("", "", "", "spec.nodeName=node-a"), true},
		{"!= synced, exact excluded value", notOther, req("", "", "", "spec.nodeName=node-b"), false},
		{"!= synced, nothing", notOther, req("", "", "", ""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.synced.Covers(tt.req); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWholeAndDescribe(t *testing.T) {
	for _, tc := range []struct {
		ns, label, field string
		whole            bool
		describe         string
	}{
		{"", "", "", true, "pods"},
		{"", "", "spec.nodeName=node-a", false, "pods with spec.nodeName=node-a"},
		{"kube-node-lease", "", "", false, "pods in namespace kube-node-lease"},
		{"", "a=b", "", false, "pods labelled a=b"},
	} {
		s := mustSynced(t, tc.ns, tc.label, tc.field)
		if s.Whole() != tc.whole || s.Describe("pods") != tc.describe {
			t.Errorf("%+v: got whole=%v %q, want whole=%v %q", tc, s.Whole(), s.Describe("pods"), tc.whole, tc.describe)
		}
	}
	if !(Synced{}).Whole() || !(Synced{}).Covers(Request{}) {
		t.Errorf("the zero Synced must hold and cover everything")
	}
}

func TestNewRejectsBadSelectors(t *testing.T) {
	if _, err := New("", "a in (", ""); err == nil {
		t.Errorf("bad label selector: got no error")
	}
	if _, err := New("", "", "a"); err == nil {
		t.Errorf("bad field selector: got no error")
	}
}
