package nodescope

import (
	"encoding/json"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const testNS = "ns1"

func sec(name string) Ref { return Ref{Kind: Secret, Namespace: testNS, Name: name} }
func cm(name string) Ref  { return Ref{Kind: ConfigMap, Namespace: testNS, Name: name} }
func local(name string) *corev1.LocalObjectReference {
	return &corev1.LocalObjectReference{Name: name}
}
func vol(s corev1.VolumeSource) corev1.PodSpec {
	return corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v", VolumeSource: s}}}
}

// envSpec puts env and envFrom into the container list chosen by where.
func envSpec(where string, env []corev1.EnvVar, envFrom []corev1.EnvFromSource) corev1.PodSpec {
	c := corev1.Container{Name: "c", Env: env, EnvFrom: envFrom}
	switch where {
	case "init":
		return corev1.PodSpec{InitContainers: []corev1.Container{c}}
	case "ephemeral":
		return corev1.PodSpec{EphemeralContainers: []corev1.EphemeralContainer{{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "c", Env: env, EnvFrom: envFrom}}}}
	}
	return corev1.PodSpec{Containers: []corev1.Container{c}}
}

func TestPodRefsVolumes(t *testing.T) {
	tests := []struct {
		name string
		spec corev1.PodSpec
		want []Ref
	}{
		{"secret volume", vol(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}), []Ref{sec("s")}},
		{"configMap volume", vol(corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: *local("c")}}), []Ref{cm("c")}},
		{"projected sources", vol(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{Secret: &corev1.SecretProjection{LocalObjectReference: *local("ps")}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: *local("pc")}},
			{DownwardAPI: &corev1.DownwardAPIProjection{}},
		}}}), []Ref{sec("ps"), cm("pc")}},
		{"service-account token volume", vol(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: *local("kube-root-ca.crt")}},
		}}}), []Ref{cm("kube-root-ca.crt")}},
		{"azureFile", vol(corev1.VolumeSource{AzureFile: &corev1.AzureFileVolumeSource{SecretName: "az"}}), []Ref{sec("az")}},
		{"cephfs", vol(corev1.VolumeSource{CephFS: &corev1.CephFSVolumeSource{SecretRef: local("ceph")}}), []Ref{sec("ceph")}},
		{"cinder", vol(corev1.VolumeSource{Cinder: &corev1.CinderVolumeSource{SecretRef: local("cinder")}}), []Ref{sec("cinder")}},
		{"flexVolume", vol(corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{SecretRef: local("flex")}}), []Ref{sec("flex")}},
		{"rbd", vol(corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{SecretRef: local("rbd")}}), []Ref{sec("rbd")}},
		{"scaleIO", vol(corev1.VolumeSource{ScaleIO: &corev1.ScaleIOVolumeSource{SecretRef: local("sio")}}), []Ref{sec("sio")}},
		{"iscsi", vol(corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{SecretRef: local("iscsi")}}), []Ref{sec("iscsi")}},
		{"storageos", vol(corev1.VolumeSource{StorageOS: &corev1.StorageOSVolumeSource{SecretRef: local("sos")}}), []Ref{sec("sos")}},
		{"csi", vol(corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d", NodePublishSecretRef: local("csi")}}), []Ref{sec("csi")}},
		{"csi without secret", vol(corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d"}}), nil},
		{"cephfs without secret", vol(corev1.VolumeSource{CephFS: &corev1.CephFSVolumeSource{}}), nil},
		{"emptyDir", vol(corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}), nil},
		{"pvc is not a secret", vol(corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "p"}}), nil},
		{"image pull secrets", corev1.PodSpec{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull1"}, {Name: ""}, {Name: "pull2"}}},
			[]Ref{sec("pull1"), sec("pull2")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkRefs(t, tt.spec, tt.want) })
	}
}

func TestPodRefsContainers(t *testing.T) {
	env := []corev1.EnvVar{
		{Name: "PLAIN", Value: "x"},
		{Name: "S", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: *local("env-s"), Key: "k"}}},
		{Name: "C", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: *local("env-c"), Key: "k"}}},
		{Name: "F", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
	}
	envFrom := []corev1.EnvFromSource{
		{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: *local("from-s")}},
		{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: *local("from-c")}},
	}
	for _, where := range []string{"container", "init", "ephemeral"} {
		t.Run(where+" env", func(t *testing.T) {
			checkRefs(t, envSpec(where, env, nil), []Ref{sec("env-s"), cm("env-c")})
		})
		t.Run(where+" envFrom", func(t *testing.T) {
			checkRefs(t, envSpec(where, nil, envFrom), []Ref{sec("from-s"), cm("from-c")})
		})
	}
}

func TestPodRefsWholePod(t *testing.T) {
	spec := corev1.PodSpec{
		NodeName:         "n1",
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "shared"}},
		Containers: []corev1.Container{{Name: "a", EnvFrom: []corev1.EnvFromSource{
			{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: *local("shared")}}}}},
		Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "shared"}}}},
	}
	tests := []struct {
		name        string
		nodeName    string
		annotations map[string]string
		want        []Ref
	}{
		{"bound pod, duplicates once", "n1", nil, []Ref{sec("shared")}},
		{"unbound pod", "", nil, nil},
		{"mirror pod", "n1", map[string]string{corev1.MirrorPodAnnotationKey: "x"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := spec
			s.NodeName = tt.nodeName
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "p", Annotations: tt.annotations}, Spec: s}
			checkPodRefs(t, pod, tt.want)
		})
	}
}

func TestNodeRefs(t *testing.T) {
	tests := []struct {
		name string
		src  *corev1.NodeConfigSource
		want []Ref
	}{
		{"none", nil, nil},
		{"empty", &corev1.NodeConfigSource{}, nil},
		{"configmap", &corev1.NodeConfigSource{ConfigMap: &corev1.ConfigMapNodeConfigSource{Namespace: "kube-system", Name: "kubelet-config", KubeletConfigKey: "kubelet"}},
			[]Ref{{Kind: ConfigMap, Namespace: "kube-system", Name: "kubelet-config"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &corev1.Node{Spec: corev1.NodeSpec{ConfigSource: tt.src}}
			if got := NodeRefs(n); !slices.Equal(got, tt.want) {
				t.Errorf("NodeRefs: got %v, want %v", got, tt.want)
			}
			got, err := NodeRefsJSON(mustJSON(t, n))
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("NodeRefsJSON: got %v, %v, want %v", got, err, tt.want)
			}
		})
	}
}

func checkRefs(t *testing.T, spec corev1.PodSpec, want []Ref) {
	t.Helper()
	spec.NodeName = "n1"
	checkPodRefs(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "p"}, Spec: spec}, want)
}

// checkPodRefs checks the references found in pod, and in its JSON.
func checkPodRefs(t *testing.T, pod *corev1.Pod, want []Ref) {
	t.Helper()
	if got := PodRefs(pod); !slices.Equal(got, want) {
		t.Errorf("PodRefs: got %v, want %v", got, want)
	}
	got, err := PodRefsJSON(mustJSON(t, pod))
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("PodRefsJSON: got %v, %v, want %v", got, err, want)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
