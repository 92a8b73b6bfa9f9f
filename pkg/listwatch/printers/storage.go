package printers

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Annotations that mark the default StorageClass.
const (
	isDefaultStorageClassAnnotation     = "storageclass.kubernetes.io/is-default-class"
	betaIsDefaultStorageClassAnnotation = "storageclass.beta.kubernetes.io/is-default-class"
)

// storagePrinters are kube's printers of storage.k8s.io.
func storagePrinters() map[schema.GroupResource]Printer {
	storage := func(r string) schema.GroupResource {
		return schema.GroupResource{Group: storagev1.GroupName, Resource: r}
	}
	return map[schema.GroupResource]Printer{
		storage("storageclasses"):    resourcePrinter(storageClassColumns, storageClassRow),
		storage("csidrivers"):        resourcePrinter(csiDriverColumns, csiDriverRow),
		storage("csinodes"):          resourcePrinter(csiNodeColumns, csiNodeRow),
		storage("volumeattachments"): resourcePrinter(volumeAttachmentColumns, volumeAttachmentRow),
	}
}

var storageClassColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Provisioner", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["provisioner"]},
	{Name: "ReclaimPolicy", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["reclaimPolicy"]},
	{Name: "VolumeBindingMode", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["volumeBindingMode"]},
	{Name: "AllowVolumeExpansion", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["allowVolumeExpansion"]},
	ageColumn,
}

func storageClassRow(sc *storagev1.StorageClass, now time.Time) []any {
	name := sc.Name
	if sc.Annotations[isDefaultStorageClassAnnotation] == "true" || sc.Annotations[betaIsDefaultStorageClassAnnotation] == "true" {
		name += " (default)"
	}
	return []any{name, sc.Provisioner,
		string(deref(sc.ReclaimPolicy, corev1.PersistentVolumeReclaimDelete)),
		string(deref(sc.VolumeBindingMode, storagev1.VolumeBindingImmediate)),
		deref(sc.AllowVolumeExpansion, false), age(sc.CreationTimestamp, now)}
}

var csiDriverColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "AttachRequired", Type: "boolean", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["attachRequired"]},
	{Name: "PodInfoOnMount", Type: "boolean", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["podInfoOnMount"]},
	{Name: "StorageCapacity", Type: "boolean", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["storageCapacity"]},
	{Name: "TokenRequests", Type: "string", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["tokenRequests"]},
	{Name: "RequiresRepublish", Type: "boolean", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["requiresRepublish"]},
	{Name: "Modes", Type: "string", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["volumeLifecycleModes"]},
	ageColumn,
}

func csiDriverRow(d *storagev1.CSIDriver, now time.Time) []any {
	modes := make([]string, 0, len(d.Spec.VolumeLifecycleModes))
	for _, m := range d.Spec.VolumeLifecycleModes {
		modes = append(modes, string(m))
	}
	tokenRequests := unsetValue
	if d.Spec.TokenRequests != nil {
		audiences := make([]string, 0, len(d.Spec.TokenRequests))
		for _, t := range d.Spec.TokenRequests {
			audiences = append(audiences, t.Audience)
		}
		tokenRequests = strings.Join(audiences, ",")
	}
	return []any{d.Name, deref(d.Spec.AttachRequired, true), deref(d.Spec.PodInfoOnMount, false),
		deref(d.Spec.StorageCapacity, false), tokenRequests, deref(d.Spec.RequiresRepublish, false),
		orNone(strings.Join(modes, ",")), age(d.CreationTimestamp, now)}
}

var csiNodeColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Drivers", Type: "integer", Description: "Drivers indicates the number of CSI drivers registered on the node"},
	ageColumn,
}

func csiNodeRow(n *storagev1.CSINode, now time.Time) []any {
	return []any{n.Name, int64(len(n.Spec.Drivers)), age(n.CreationTimestamp, now)}
}

var volumeAttachmentColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Attacher", Type: "string", Format: "name", Description: storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["attacher"]},
	{Name: "PV", Type: "string", Description: storagev1.VolumeAttachmentSource{}.SwaggerDoc()["persistentVolumeName"]},
	{Name: "Node", Type: "string", Description: storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["nodeName"]},
	{Name: "Attached", Type: "boolean", Description: storagev1.VolumeAttachmentStatus{}.SwaggerDoc()["attached"]},
	ageColumn,
}

func volumeAttachmentRow(va *storagev1.VolumeAttachment, now time.Time) []any {
	return []any{va.Name, va.Spec.Attacher, deref(va.Spec.Source.PersistentVolumeName, ""),
		va.Spec.NodeName, va.Status.Attached, age(va.CreationTimestamp, now)}
}
