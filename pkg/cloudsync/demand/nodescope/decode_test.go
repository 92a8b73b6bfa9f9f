package nodescope

import (
	"encoding/json"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fullPod names references everywhere a pod can, beside the fields that
// name none (status, managed fields, probes), as the cloud sends it.
func fullPod() *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "p",
			Annotations:   map[string]string{"a": "b"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}},
		Spec: corev1.PodSpec{
			NodeName:         "n1",
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}},
			InitContainers: []corev1.Container{{Name: "i", Image: "busybox",
				Env: []corev1.EnvVar{{Name: "S", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: *local("init-s"), Key: "k"}}}}}},
			Containers: []corev1.Container{{Name: "c", Image: "nginx",
				EnvFrom:        []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: *local("from-c")}}},
				ReadinessProbe: &corev1.Probe{InitialDelaySeconds: 3}}},
			EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "e",
				Env: []corev1.EnvVar{{Name: "C", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: *local("eph-c"), Key: "k"}}}}}}},
			Volumes: []corev1.Volume{
				{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "vol-s"}}},
				{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: *local("vol-c")}}},
			},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Ready: true}}},
	}
}

func TestPodRefsJSONWholePod(t *testing.T) {
	checkPodRefs(t, fullPod(), []Ref{sec("pull"), sec("init-s"), sec("vol-s"), cm("from-c"), cm("eph-c"), cm("vol-c")})
}

func TestRefsJSONRefusesBadJSON(t *testing.T) {
	for _, raw := range []string{``, `{`, `[]`, `{"spec":{"nodeName":5}}`, `{"spec":{"volumes":{}}}`} {
		if got, err := PodRefsJSON([]byte(raw)); err == nil {
			t.Errorf("PodRefsJSON(%q): got %v, nil, want an error", raw, got)
		}
	}
	for _, raw := range []string{``, `{`, `[]`, `{"spec":{"configSource":[]}}`} {
		if got, err := NodeRefsJSON([]byte(raw)); err == nil {
			t.Errorf("NodeRefsJSON(%q): got %v, nil, want an error", raw, got)
		}
	}
}

// FuzzPodRefsJSON checks that any JSON the whole pod decodes from gives,
// read in part, the references PodRefs finds in the whole pod.
func FuzzPodRefsJSON(f *testing.F) {
	full, err := json.Marshal(fullPod())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(full)
	f.Add([]byte(`{"metadata":{"namespace":"x","annotations":{"kubernetes.io/config.mirror":"m"}},"spec":{"nodeName":"n","volumes":[{"name":"v","secret":{"secretName":"s"}}]}}`))
	f.Add([]byte(`{"spec":{"nodeName":"n","ephemeralContainers":[{"name":"e","envFrom":[{"secretRef":{"name":"s"}}]}],"volumes":[{"name":"v","projected":{"sources":[{"configMap":{"name":"c"}}]}}]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var pod corev1.Pod
		if json.Unmarshal(raw, &pod) != nil {
			return
		}
		want := PodRefs(&pod)
		got, err := PodRefsJSON(raw)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("got %v, %v, want %v", got, err, want)
		}
	})
}
