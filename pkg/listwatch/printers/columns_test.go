package printers

import (
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestColumns requires kube's column names, types, formats and priorities
// (name:type[:format][:priority]) for each printed resource, and a
// description for every column kube describes.
func TestColumns(t *testing.T) {
	tests := []struct {
		gr   schema.GroupResource
		want []string
	}{
		{schema.GroupResource{Resource: "widgets", Group: "example.com"}, []string{"Name:string:name", "Created At:date"}},
		{schema.GroupResource{Resource: "services"}, []string{"Name:string:name", "Type:string", "Cluster-IP:string",
			"External-IP:string", "Port(s):string", "Age:string", "Selector:string::1"}},
		{schema.GroupResource{Resource: "endpoints"}, []string{"Name:string:name", "Endpoints:string", "Age:string"}},
		{schema.GroupResource{Resource: "serviceaccounts"}, []string{"Name:string:name", "Age:string"}},
		{schema.GroupResource{Resource: "events"}, eventColumnsWant},
		{schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, eventColumnsWant},
		{schema.GroupResource{Resource: "persistentvolumes"}, []string{"Name:string:name", "Capacity:string", "Access Modes:string",
			"Reclaim Policy:string", "Status:string", "Claim:string", "StorageClass:string", "VolumeAttributesClass:string",
			"Reason:string", "Age:string", "VolumeMode:string::1"}},
		{schema.GroupResource{Resource: "persistentvolumeclaims"}, []string{"Name:string:name", "Status:string", "Volume:string",
			"Capacity:string", "Access Modes:string", "StorageClass:string", "VolumeAttributesClass:string", "Age:string",
			"VolumeMode:string::1"}},
		{schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}, []string{"Name:string:name",
			"AddressType:string", "Ports:string", "Endpoints:string", "Age:string"}},
		{schema.GroupResource{Group: "node.k8s.io", Resource: "runtimeclasses"}, []string{"Name:string:name", "Handler:string", "Age:string"}},
		{schema.GroupResource{Group: "networking.k8s.io", Resource: "servicecidrs"}, []string{"Name:string:name", "CIDRs:string", "Age:string"}},
		{schema.GroupResource{Group: "storage.k8s.io", Resource: "storageclasses"}, []string{"Name:string:name", "Provisioner:string",
			"ReclaimPolicy:string", "VolumeBindingMode:string", "AllowVolumeExpansion:string", "Age:string"}},
		{schema.GroupResource{Group: "storage.k8s.io", Resource: "csidrivers"}, []string{"Name:string:name", "AttachRequired:boolean",
			"PodInfoOnMount:boolean", "StorageCapacity:boolean", "TokenRequests:string", "RequiresRepublish:boolean",
			"Modes:string", "Age:string"}},
		{schema.GroupResource{Group: "storage.k8s.io", Resource: "csinodes"}, []string{"Name:string:name", "Drivers:integer", "Age:string"}},
		{schema.GroupResource{Group: "storage.k8s.io", Resource: "volumeattachments"}, []string{"Name:string:name",
			"Attacher:string:name", "PV:string", "Node:string", "Attached:boolean", "Age:string"}},
		{schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, []string{"Name:string:name", "Holder:string", "Age:string"}},
	}
	for _, tt := range tests {
		t.Run(tt.gr.String(), func(t *testing.T) {
			var got []string
			for _, c := range For(tt.gr).Columns {
				s := c.Name + ":" + c.Type
				if c.Format != "" || c.Priority != 0 {
					s += ":" + c.Format
				}
				if c.Priority != 0 {
					s += fmt.Sprintf(":%d", c.Priority)
				}
				got = append(got, s)
				// kube's runtimeclass Handler looks its description up
				// where there is none.
				if c.Description == "" && !(tt.gr.Resource == "runtimeclasses" && c.Name == "Handler") {
					t.Errorf("column %s has no description", c.Name)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got columns %q, want %q", got, tt.want)
			}
		})
	}
}

var eventColumnsWant = []string{"Last Seen:string", "Type:string", "Reason:string", "Object:string", "Subobject:string::1",
	"Source:string::1", "Message:string", "First Seen:string::1", "Count:string::1", "Name:string:name:1"}
