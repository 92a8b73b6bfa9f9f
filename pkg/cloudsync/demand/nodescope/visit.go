package nodescope

import (
	corev1 "k8s.io/api/core/v1"
)

// visitPodSecretNames is k8s.io/kubernetes pkg/api/v1/pod
// VisitPodSecretNames (v1.36): image pull secrets, container env and
// envFrom, and the secret-bearing volume sources. As there, only the first
// non-nil source of a volume counts.
func visitPodSecretNames(spec *corev1.PodSpec, visit func(string)) {
	for _, ref := range spec.ImagePullSecrets {
		visit(ref.Name)
	}
	visitContainers(spec, func(env []corev1.EnvVar, envFrom []corev1.EnvFromSource) {
		for _, e := range envFrom {
			if e.SecretRef != nil {
				visit(e.SecretRef.Name)
			}
		}
		for _, e := range env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				visit(e.ValueFrom.SecretKeyRef.Name)
			}
		}
	})
	for i := range spec.Volumes {
		visitVolumeSecretNames(&spec.Volumes[i].VolumeSource, visit)
	}
}

// visitVolumeSecretNames visits the secret named by one volume source.
func visitVolumeSecretNames(s *corev1.VolumeSource, visit func(string)) {
	switch {
	case s.AzureFile != nil:
		visit(s.AzureFile.SecretName)
	case s.CephFS != nil:
		visitLocalRef(s.CephFS.SecretRef, visit)
	case s.Cinder != nil:
		visitLocalRef(s.Cinder.SecretRef, visit)
	case s.FlexVolume != nil:
		visitLocalRef(s.FlexVolume.SecretRef, visit)
	case s.Projected != nil:
		for j := range s.Projected.Sources {
			if sec := s.Projected.Sources[j].Secret; sec != nil {
				visit(sec.Name)
			}
		}
	case s.RBD != nil:
		visitLocalRef(s.RBD.SecretRef, visit)
	case s.Secret != nil:
		visit(s.Secret.SecretName)
	case s.ScaleIO != nil:
		visitLocalRef(s.ScaleIO.SecretRef, visit)
	case s.ISCSI != nil:
		visitLocalRef(s.ISCSI.SecretRef, visit)
	case s.StorageOS != nil:
		if s.StorageOS.SecretRef != nil {
			visit(s.StorageOS.SecretRef.Name)
		}
	case s.CSI != nil:
		visitLocalRef(s.CSI.NodePublishSecretRef, visit)
	}
}

func visitLocalRef(ref *corev1.LocalObjectReference, visit func(string)) {
	if ref != nil {
		visit(ref.Name)
	}
}

// visitPodConfigMapNames is k8s.io/kubernetes pkg/api/v1/pod
// VisitPodConfigmapNames (v1.36): container env and envFrom, configMap
// volumes and projected configMap sources. The projected volume that
// service-account admission adds to every pod names the kube-root-ca.crt
// configmap this way.
func visitPodConfigMapNames(spec *corev1.PodSpec, visit func(string)) {
	visitContainers(spec, func(env []corev1.EnvVar, envFrom []corev1.EnvFromSource) {
		for _, e := range envFrom {
			if e.ConfigMapRef != nil {
				visit(e.ConfigMapRef.Name)
			}
		}
		for _, e := range env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
				visit(e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
	})
	for i := range spec.Volumes {
		s := &spec.Volumes[i].VolumeSource
		switch {
		case s.Projected != nil:
			for j := range s.Projected.Sources {
				if cm := s.Projected.Sources[j].ConfigMap; cm != nil {
					visit(cm.Name)
				}
			}
		case s.ConfigMap != nil:
			visit(s.ConfigMap.Name)
		}
	}
}
