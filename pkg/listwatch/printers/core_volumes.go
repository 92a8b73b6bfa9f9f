package printers

import (
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// terminatingPhase is the STATUS kube prints for a volume or claim being
// deleted.
const terminatingPhase = "Terminating"

var persistentVolumeColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["capacity"]},
	{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["accessModes"]},
	{Name: "Reclaim Policy", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["persistentVolumeReclaimPolicy"]},
	{Name: "Status", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["phase"]},
	{Name: "Claim", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["claimRef"]},
	{Name: "StorageClass", Type: "string", Description: "StorageClass of the pv"},
	{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pv"},
	{Name: "Reason", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["reason"]},
	ageColumn,
	{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["volumeMode"]},
}

func persistentVolumeRow(pv *corev1.PersistentVolume, now time.Time) []any {
	claim := ""
	if ref := pv.Spec.ClaimRef; ref != nil {
		claim = ref.Namespace + "/" + ref.Name
	}
	phase := string(pv.Status.Phase)
	if pv.DeletionTimestamp != nil {
		phase = terminatingPhase
	}
	capacity := pv.Spec.Capacity[corev1.ResourceStorage]
	class, ok := pv.Annotations[corev1.BetaStorageClassAnnotation]
	if !ok {
		class = pv.Spec.StorageClassName
	}
	return []any{pv.Name, capacity.String(), accessModes(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
		phase, claim, class, deref(pv.Spec.VolumeAttributesClassName, unsetValue),
		pv.Status.Reason, age(pv.CreationTimestamp, now), volumeMode(pv.Spec.VolumeMode)}
}

var persistentVolumeClaimColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Status", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["phase"]},
	{Name: "Volume", Type: "string", Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeName"]},
	{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["capacity"]},
	{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["accessModes"]},
	{Name: "StorageClass", Type: "string", Description: "StorageClass of the pvc"},
	{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pvc"},
	ageColumn,
	{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeMode"]},
}

func persistentVolumeClaimRow(pvc *corev1.PersistentVolumeClaim, now time.Time) []any {
	phase := string(pvc.Status.Phase)
	if pvc.DeletionTimestamp != nil {
		phase = terminatingPhase
	}
	capacity, modes := "", ""
	if pvc.Spec.VolumeName != "" {
		modes = accessModes(pvc.Status.AccessModes)
		q := pvc.Status.Capacity[corev1.ResourceStorage]
		capacity = q.String()
	}
	class, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]
	if !ok {
		class = deref(pvc.Spec.StorageClassName, "")
	}
	return []any{pvc.Name, phase, pvc.Spec.VolumeName, capacity, modes, class,
		deref(pvc.Spec.VolumeAttributesClassName, unsetValue), age(pvc.CreationTimestamp, now), volumeMode(pvc.Spec.VolumeMode)}
}

// accessModeAbbreviations are the short names kube prints, in its order.
var accessModeAbbreviations = []struct {
	mode corev1.PersistentVolumeAccessMode
	abbr string
}{
	{corev1.ReadWriteOnce, "RWO"},
	{corev1.ReadOnlyMany, "ROX"},
	{corev1.ReadWriteMany, "RWX"},
	{corev1.ReadWriteOncePod, "RWOP"},
}

// accessModes is kube's GetAccessModesAsString.
func accessModes(modes []corev1.PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range accessModeAbbreviations {
		if slices.Contains(modes, m.mode) {
			out = append(out, m.abbr)
		}
	}
	return strings.Join(out, ",")
}

func volumeMode(m *corev1.PersistentVolumeMode) string {
	if m == nil {
		return unsetValue
	}
	return string(*m)
}
