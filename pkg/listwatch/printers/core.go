package printers

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
)

// corePrinters are kube's printers of the core ("") group.
func corePrinters() map[schema.GroupResource]Printer {
	core := func(r string) schema.GroupResource { return schema.GroupResource{Resource: r} }
	return map[schema.GroupResource]Printer{
		core("pods"):                   {Columns: podColumns, Row: podRow, EmptyRows: true},
		core("nodes"):                  {Columns: nodeColumns, Row: nodeRow, EmptyRows: true},
		core("namespaces"):             resourcePrinter(namespaceColumns, namespaceRow),
		core("secrets"):                resourcePrinter(secretColumns, secretRow),
		core("configmaps"):             resourcePrinter(configMapColumns, configMapRow),
		core("serviceaccounts"):        resourcePrinter(serviceAccountColumns, serviceAccountRow),
		core("services"):               resourcePrinter(serviceColumns, serviceRow),
		core("endpoints"):              resourcePrinter(endpointsColumns, endpointsRow),
		core("events"):                 resourcePrinter(eventColumns, eventRow),
		core("persistentvolumes"):      resourcePrinter(persistentVolumeColumns, persistentVolumeRow),
		core("persistentvolumeclaims"): resourcePrinter(persistentVolumeClaimColumns, persistentVolumeClaimRow),
	}
}

var namespaceColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Status", Type: "string", Description: "The status of the namespace"},
	ageColumn,
}

func namespaceRow(ns *corev1.Namespace, now time.Time) []any {
	return []any{ns.Name, string(ns.Status.Phase), age(ns.CreationTimestamp, now)}
}

var secretColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Type", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["type"]},
	{Name: "Data", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["data"]},
	ageColumn,
}

func secretRow(s *corev1.Secret, now time.Time) []any {
	return []any{s.Name, string(s.Type), int64(len(s.Data)), age(s.CreationTimestamp, now)}
}

var configMapColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Data", Type: "string", Description: corev1.ConfigMap{}.SwaggerDoc()["data"]},
	ageColumn,
}

func configMapRow(cm *corev1.ConfigMap, now time.Time) []any {
	return []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), age(cm.CreationTimestamp, now)}
}

var serviceAccountColumns = []metav1.TableColumnDefinition{nameColumn, ageColumn}

func serviceAccountRow(sa *corev1.ServiceAccount, now time.Time) []any {
	return []any{sa.Name, age(sa.CreationTimestamp, now)}
}

var serviceColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Type", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["type"]},
	{Name: "Cluster-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"]},
	{Name: "External-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["externalIPs"]},
	{Name: "Port(s)", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["ports"]},
	ageColumn,
	{Name: "Selector", Type: "string", Priority: 1, Description: corev1.ServiceSpec{}.SwaggerDoc()["selector"]},
}

func serviceRow(svc *corev1.Service, now time.Time) []any {
	clusterIP := noneValue
	if len(svc.Spec.ClusterIPs) > 0 {
		clusterIP = svc.Spec.ClusterIPs[0]
	}
	return []any{svc.Name, string(svc.Spec.Type), clusterIP, serviceExternalIP(svc),
		orNone(servicePorts(svc.Spec.Ports)), age(svc.CreationTimestamp, now), labels.FormatLabels(svc.Spec.Selector)}
}

// serviceExternalIP is kube's getServiceExternalIP, wide.
func serviceExternalIP(svc *corev1.Service) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		return orNone(strings.Join(svc.Spec.ExternalIPs, ","))
	case corev1.ServiceTypeLoadBalancer:
		var ips []string
		if lb := loadBalancerIPs(svc.Status.LoadBalancer); lb != "" {
			ips = strings.Split(lb, ",")
		}
		ips = append(ips, svc.Spec.ExternalIPs...)
		if len(ips) == 0 {
			return "<pending>"
		}
		return strings.Join(ips, ",")
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return unknownValue
}

// loadBalancerIPs is kube's loadBalancerStatusStringer, wide: the sorted
// ingress IPs, or hostnames where an ingress has no IP.
func loadBalancerIPs(s corev1.LoadBalancerStatus) string {
	result := sets.New[string]()
	for _, in := range s.Ingress {
		if in.IP != "" {
			result.Insert(in.IP)
		} else if in.Hostname != "" {
			result.Insert(in.Hostname)
		}
	}
	return strings.Join(sets.List(result), ",")
}

// servicePorts is kube's makePortString: port[:nodePort]/protocol, comma
// separated.
func servicePorts(ports []corev1.ServicePort) string {
	pieces := make([]string, len(ports))
	for i, p := range ports {
		pieces[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.NodePort > 0 {
			pieces[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		}
	}
	return strings.Join(pieces, ",")
}

var endpointsColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Endpoints", Type: "string", Description: corev1.Endpoints{}.SwaggerDoc()["subsets"]},
	ageColumn,
}

func endpointsRow(ep *corev1.Endpoints, now time.Time) []any {
	return []any{ep.Name, formatEndpoints(ep), age(ep.CreationTimestamp, now)}
}

// maxListed is how many addresses or ports a list cell shows before
// "+ N more...", as kube's printers do.
const maxListed = 3

// formatEndpoints is kube's formatEndpoints with every port: ip:port per
// address and port (the bare IP for a headless subset without ports).
func formatEndpoints(ep *corev1.Endpoints) string {
	if len(ep.Subsets) == 0 {
		return noneValue
	}
	var list []string
	count := 0
	for _, ss := range ep.Subsets {
		if len(ss.Ports) == 0 {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				list = appendBounded(list, a.IP)
			}
			continue
		}
		for _, p := range ss.Ports {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				list = appendBounded(list, net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	s := strings.Join(list, ",")
	if count > len(list) {
		return fmt.Sprintf("%s + %d more...", s, count-maxListed)
	}
	return s
}

// appendBounded appends s unless list already holds maxListed items.
func appendBounded(list []string, s string) []string {
	if len(list) == maxListed {
		return list
	}
	return append(list, s)
}
