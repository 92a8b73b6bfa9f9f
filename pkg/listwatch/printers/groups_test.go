package printers

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestServiceCIDRRow(t *testing.T) {
	requireRows(t, schema.GroupResource{Group: "networking.k8s.io", Resource: "servicecidrs"}, []rowCase{
		{"dual stack", &networkingv1.ServiceCIDR{ObjectMeta: meta("kubernetes"),
			Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/16", "fd00::/108"}}},
			[]any{"kubernetes", "10.96.0.0/16,fd00::/108", "5m"}},
	})
}

func TestEndpointSliceRow(t *testing.T) {
	requireRows(t, schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}, []rowCase{
		{"empty", &discoveryv1.EndpointSlice{ObjectMeta: meta("s"), AddressType: discoveryv1.AddressTypeIPv4},
			[]any{"s", "IPv4", "<unset>", "<unset>", "5m"}},
		{"ports and addresses", &discoveryv1.EndpointSlice{ObjectMeta: meta("s"), AddressType: discoveryv1.AddressTypeIPv6,
			Ports:     []discoveryv1.EndpointPort{{Port: ptr[int32](80)}, {Name: ptr("http")}, {}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"fd00::1", "fd00::2"}}, {Addresses: []string{"fd00::3"}}}},
			[]any{"s", "IPv6", "80,http,*", "fd00::1,fd00::2,fd00::3", "5m"}},
		{"more", &discoveryv1.EndpointSlice{ObjectMeta: meta("s"), AddressType: discoveryv1.AddressTypeIPv4,
			Ports:     []discoveryv1.EndpointPort{{Port: ptr[int32](1)}, {Port: ptr[int32](2)}, {Port: ptr[int32](3)}, {Port: ptr[int32](4)}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"1.1.1.1", "1.1.1.2", "1.1.1.3", "1.1.1.4", "1.1.1.5"}}}},
			[]any{"s", "IPv4", "1,2,3 + 1 more...", "1.1.1.1,1.1.1.2,1.1.1.3 + 2 more...", "5m"}},
	})
}

func TestLeaseAndRuntimeClassRows(t *testing.T) {
	requireRows(t, schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, []rowCase{
		{"held", &coordinationv1.Lease{ObjectMeta: meta("n1"), Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("n1")}},
			[]any{"n1", "n1", "5m"}},
		{"free", &coordinationv1.Lease{ObjectMeta: meta("n1")}, []any{"n1", "", "5m"}},
	})
	requireRows(t, schema.GroupResource{Group: "node.k8s.io", Resource: "runtimeclasses"}, []rowCase{
		{"runc", &nodev1.RuntimeClass{ObjectMeta: meta("default"), Handler: "runc"}, []any{"default", "runc", "5m"}},
	})
}

func TestStorageRows(t *testing.T) {
	defaultClass := meta("standard")
	defaultClass.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
	retain := corev1.PersistentVolumeReclaimRetain
	wait := storagev1.VolumeBindingWaitForFirstConsumer
	requireRows(t, schema.GroupResource{Group: "storage.k8s.io", Resource: "storageclasses"}, []rowCase{
		{"defaults", &storagev1.StorageClass{ObjectMeta: meta("sc"), Provisioner: "p"},
			[]any{"sc", "p", "Delete", "Immediate", false, "5m"}},
		{"default class", &storagev1.StorageClass{ObjectMeta: defaultClass, Provisioner: "p", ReclaimPolicy: &retain,
			VolumeBindingMode: &wait, AllowVolumeExpansion: ptr(true)},
			[]any{"standard (default)", "p", "Retain", "WaitForFirstConsumer", true, "5m"}},
	})
	requireRows(t, schema.GroupResource{Group: "storage.k8s.io", Resource: "csidrivers"}, []rowCase{
		{"defaults", &storagev1.CSIDriver{ObjectMeta: meta("d")},
			[]any{"d", true, false, false, "<unset>", false, "<none>", "5m"}},
		{"set", &storagev1.CSIDriver{ObjectMeta: meta("d"), Spec: storagev1.CSIDriverSpec{AttachRequired: ptr(false),
			PodInfoOnMount: ptr(true), StorageCapacity: ptr(true), RequiresRepublish: ptr(true),
			TokenRequests:        []storagev1.TokenRequest{{Audience: "a"}, {Audience: "b"}},
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral}}},
			[]any{"d", false, true, true, "a,b", true, "Persistent,Ephemeral", "5m"}},
		// An empty list does not survive JSON (omitempty), nor kube's
		// storage: it prints as unset there too.
		{"empty token requests", &storagev1.CSIDriver{ObjectMeta: meta("d"), Spec: storagev1.CSIDriverSpec{
			TokenRequests: []storagev1.TokenRequest{}}},
			[]any{"d", true, false, false, "<unset>", false, "<none>", "5m"}},
	})
	requireRows(t, schema.GroupResource{Group: "storage.k8s.io", Resource: "csinodes"}, []rowCase{
		{"two drivers", &storagev1.CSINode{ObjectMeta: meta("n1"), Spec: storagev1.CSINodeSpec{
			Drivers: []storagev1.CSINodeDriver{{Name: "a"}, {Name: "b"}}}}, []any{"n1", int64(2), "5m"}},
	})
	requireRows(t, schema.GroupResource{Group: "storage.k8s.io", Resource: "volumeattachments"}, []rowCase{
		{"attached", &storagev1.VolumeAttachment{ObjectMeta: meta("va"), Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com",
			NodeName: "n1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr("pv1")}},
			Status: storagev1.VolumeAttachmentStatus{Attached: true}},
			[]any{"va", "csi.example.com", "pv1", "n1", true, "5m"}},
		{"inline", &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va"}, Spec: storagev1.VolumeAttachmentSpec{Attacher: "a"}},
			[]any{"va", "a", "", "", false, "<unknown>"}},
	})
}
