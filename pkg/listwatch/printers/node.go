package printers

import (
	"time"

	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// nodePrinters are kube's printers of node.k8s.io.
func nodePrinters() map[schema.GroupResource]Printer {
	return map[schema.GroupResource]Printer{
		{Group: nodev1.GroupName, Resource: "runtimeclasses"}: resourcePrinter(runtimeClassColumns, runtimeClassRow),
	}
}

var runtimeClassColumns = []metav1.TableColumnDefinition{
	nameColumn,
	// kube looks the description up in ObjectMeta's docs, which have no
	// "handler": the description is empty.
	{Name: "Handler", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["handler"]},
	ageColumn,
}

func runtimeClassRow(rc *nodev1.RuntimeClass, now time.Time) []any {
	return []any{rc.Name, rc.Handler, age(rc.CreationTimestamp, now)}
}
