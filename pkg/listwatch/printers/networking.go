package printers

import (
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// networkingPrinters are kube's printers of networking.k8s.io kinds the
// daemon holds.
func networkingPrinters() map[schema.GroupResource]Printer {
	return map[schema.GroupResource]Printer{
		{Group: networkingv1.GroupName, Resource: "servicecidrs"}: resourcePrinter(serviceCIDRColumns, serviceCIDRRow),
	}
}

var serviceCIDRColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "CIDRs", Type: "string", Description: networkingv1.ServiceCIDRSpec{}.SwaggerDoc()["cidrs"]},
	ageColumn,
}

func serviceCIDRRow(c *networkingv1.ServiceCIDR, now time.Time) []any {
	return []any{c.Name, strings.Join(c.Spec.CIDRs, ","), age(c.CreationTimestamp, now)}
}
