package printers

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// discoveryPrinters are kube's printers of discovery.k8s.io.
func discoveryPrinters() map[schema.GroupResource]Printer {
	return map[schema.GroupResource]Printer{
		{Group: discoveryv1.GroupName, Resource: "endpointslices"}: resourcePrinter(endpointSliceColumns, endpointSliceRow),
	}
}

var endpointSliceColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "AddressType", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["addressType"]},
	{Name: "Ports", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["ports"]},
	{Name: "Endpoints", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["endpoints"]},
	ageColumn,
}

func endpointSliceRow(s *discoveryv1.EndpointSlice, now time.Time) []any {
	var ports []string
	for _, p := range s.Ports {
		switch {
		case p.Port != nil:
			ports = append(ports, strconv.Itoa(int(*p.Port)))
		case p.Name != nil:
			ports = append(ports, *p.Name)
		default:
			ports = append(ports, "*")
		}
	}
	var addresses []string
	for _, e := range s.Endpoints {
		addresses = append(addresses, e.Addresses...)
	}
	return []any{s.Name, string(s.AddressType), listWithMore(ports), listWithMore(addresses), age(s.CreationTimestamp, now)}
}

// listWithMore is kube's listWithMoreString: the first maxListed items and
// "+ N more...", or <unset> for none.
func listWithMore(items []string) string {
	if len(items) > maxListed {
		return fmt.Sprintf("%s + %d more...", strings.Join(items[:maxListed], ","), len(items)-maxListed)
	}
	if len(items) == 0 {
		return unsetValue
	}
	return strings.Join(items, ",")
}
