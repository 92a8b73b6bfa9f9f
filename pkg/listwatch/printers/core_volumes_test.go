package printers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func storage(q string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(q)}
}

func TestPersistentVolumeRow(t *testing.T) {
	deleting := meta("pv1")
	deleting.DeletionTimestamp = &metav1.Time{Time: tableNow}
	beta := meta("pv1")
	beta.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "old"}
	block := corev1.PersistentVolumeBlock
	requireRows(t, schema.GroupResource{Resource: "persistentvolumes"}, []rowCase{
		{"bound", &corev1.PersistentVolume{ObjectMeta: meta("pv1"), Spec: corev1.PersistentVolumeSpec{
			Capacity: storage("10Gi"), AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain, StorageClassName: "fast",
			ClaimRef: &corev1.ObjectReference{Namespace: "ns", Name: "data"}, VolumeMode: &block,
			VolumeAttributesClassName: ptr("gold")},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}},
			[]any{"pv1", "10Gi", "RWO,RWX", "Retain", "Bound", "ns/data", "fast", "gold", "", "5m", "Block"}},
		{"terminating, no capacity", &corev1.PersistentVolume{ObjectMeta: deleting,
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeFailed, Reason: "Oops"}},
			[]any{"pv1", "0", "", "", "Terminating", "", "", "<unset>", "Oops", "5m", "<unset>"}},
		{"beta class annotation", &corev1.PersistentVolume{ObjectMeta: beta, Spec: corev1.PersistentVolumeSpec{StorageClassName: "new"}},
			[]any{"pv1", "0", "", "", "", "", "old", "<unset>", "", "5m", "<unset>"}},
	})
}

func TestPersistentVolumeClaimRow(t *testing.T) {
	fs := corev1.PersistentVolumeFilesystem
	requireRows(t, schema.GroupResource{Resource: "persistentvolumeclaims"}, []rowCase{
		{"pending shows no capacity", &corev1.PersistentVolumeClaim{ObjectMeta: meta("c"), Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr("fast"), VolumeMode: &fs,
			Resources: corev1.VolumeResourceRequirements{Requests: storage("1Gi")}},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}},
			[]any{"c", "Pending", "", "", "", "fast", "<unset>", "5m", "Filesystem"}},
		{"bound", &corev1.PersistentVolumeClaim{ObjectMeta: meta("c"), Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv1"},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: storage("2Gi"),
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadOnlyMany}}},
			[]any{"c", "Bound", "pv1", "2Gi", "ROX,RWOP", "", "<unset>", "5m", "<unset>"}},
	})
}
