package printers

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// coordinationPrinters are kube's printers of coordination.k8s.io.
func coordinationPrinters() map[schema.GroupResource]Printer {
	return map[schema.GroupResource]Printer{
		{Group: coordinationv1.GroupName, Resource: "leases"}: resourcePrinter(leaseColumns, leaseRow),
	}
}

var leaseColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Holder", Type: "string", Description: coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]},
	ageColumn,
}

func leaseRow(l *coordinationv1.Lease, now time.Time) []any {
	return []any{l.Name, deref(l.Spec.HolderIdentity, ""), age(l.CreationTimestamp, now)}
}
