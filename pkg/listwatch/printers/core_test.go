package printers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, CreationTimestamp: created}
}

func TestServiceRow(t *testing.T) {
	tcp := corev1.ProtocolTCP
	requireRows(t, schema.GroupResource{Resource: "services"}, []rowCase{
		{"cluster IP", &corev1.Service{ObjectMeta: meta("web"), Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.0.0.10", ClusterIPs: []string{"10.0.0.10", "fd00::10"},
			Selector: map[string]string{"b": "2", "a": "1"},
			Ports:    []corev1.ServicePort{{Port: 80, Protocol: tcp}, {Port: 53, Protocol: corev1.ProtocolUDP}}}},
			[]any{"web", "ClusterIP", "10.0.0.10", "<none>", "80/TCP,53/UDP", "5m", "a=1,b=2"}},
		{"headless without ports", &corev1.Service{ObjectMeta: meta("h"), Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: "None", ClusterIPs: []string{"None"}}},
			[]any{"h", "ClusterIP", "None", "<none>", "<none>", "5m", "<none>"}},
		{"node port with external IPs", &corev1.Service{ObjectMeta: meta("np"), Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeNodePort, ClusterIPs: []string{"10.0.0.11"}, ExternalIPs: []string{"1.2.3.4", "1.2.3.5"},
			Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080, Protocol: tcp}}}},
			[]any{"np", "NodePort", "10.0.0.11", "1.2.3.4,1.2.3.5", "80:30080/TCP", "5m", "<none>"}},
		{"load balancer pending", &corev1.Service{ObjectMeta: meta("lb"), Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.0.0.12"}}},
			[]any{"lb", "LoadBalancer", "10.0.0.12", "<pending>", "<none>", "5m", "<none>"}},
		{"load balancer ingress", &corev1.Service{ObjectMeta: meta("lb"),
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.0.0.12"}, ExternalIPs: []string{"9.9.9.9"}},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
				{IP: "5.5.5.5"}, {Hostname: "lb.example.com"}, {IP: "4.4.4.4"}}}}},
			[]any{"lb", "LoadBalancer", "10.0.0.12", "4.4.4.4,5.5.5.5,lb.example.com,9.9.9.9", "<none>", "5m", "<none>"}},
		{"external name", &corev1.Service{ObjectMeta: meta("ext"), Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}},
			[]any{"ext", "ExternalName", "<none>", "db.example.com", "<none>", "5m", "<none>"}},
	})
}

func TestEndpointsRow(t *testing.T) {
	addrs := func(ips ...string) []corev1.EndpointAddress {
		var out []corev1.EndpointAddress
		for _, ip := range ips {
			out = append(out, corev1.EndpointAddress{IP: ip})
		}
		return out
	}
	requireRows(t, schema.GroupResource{Resource: "endpoints"}, []rowCase{
		{"none", &corev1.Endpoints{ObjectMeta: meta("e")}, []any{"e", "<none>", "5m"}},
		{"ports", &corev1.Endpoints{ObjectMeta: meta("e"), Subsets: []corev1.EndpointSubset{{
			Addresses: addrs("10.0.0.1", "fd00::1"), Ports: []corev1.EndpointPort{{Port: 80}}}}},
			[]any{"e", "10.0.0.1:80,[fd00::1]:80", "5m"}},
		{"headless", &corev1.Endpoints{ObjectMeta: meta("e"), Subsets: []corev1.EndpointSubset{{Addresses: addrs("10.0.0.1")}}},
			[]any{"e", "10.0.0.1", "5m"}},
		{"more", &corev1.Endpoints{ObjectMeta: meta("e"), Subsets: []corev1.EndpointSubset{{
			Addresses: addrs("10.0.0.1", "10.0.0.2"), Ports: []corev1.EndpointPort{{Port: 80}, {Port: 443}}}}},
			[]any{"e", "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...", "5m"}},
	})
}

func TestSmallCoreRows(t *testing.T) {
	requireRows(t, schema.GroupResource{Resource: "serviceaccounts"}, []rowCase{
		{"serviceaccount", &corev1.ServiceAccount{ObjectMeta: meta("default")}, []any{"default", "5m"}},
	})
	requireRows(t, schema.GroupResource{Resource: "configmaps"}, []rowCase{
		{"data and binary data", &corev1.ConfigMap{ObjectMeta: meta("c"), Data: map[string]string{"a": "1"},
			BinaryData: map[string][]byte{"b": {1}}}, []any{"c", int64(2), "5m"}},
	})
	requireRows(t, schema.GroupResource{Resource: "secrets"}, []rowCase{
		{"opaque", &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"k": nil}},
			[]any{"s", "Opaque", int64(1), "5m"}},
	})
	requireRows(t, schema.GroupResource{Resource: "namespaces"}, []rowCase{
		{"active", &corev1.Namespace{ObjectMeta: meta("n"), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
			[]any{"n", "Active", "5m"}},
		{"no creation time", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, []any{"n", "", "<unknown>"}},
	})
}
