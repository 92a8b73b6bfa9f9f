//go:build e2e

package fleet

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// fleetWorkers is how many objects are created in the cloud at once.
const fleetWorkers = 8

// createFleet creates each node's Node and its pods, each referencing a
// secret and a configmap of its own.
func createFleet(ctx context.Context, admin kubernetes.Interface, cfg fleetConfig) error {
	jobs := make(chan func() error)
	errs := make(chan error, fleetWorkers)
	var wg sync.WaitGroup
	for range fleetWorkers {
		wg.Go(func() {
			for job := range jobs {
				if err := job(); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range cfg.Nodes {
		node := nodeName(i)
		jobs <- func() error { return createNode(ctx, admin, node) }
		for j := range cfg.Pods {
			jobs <- func() error { return createPod(ctx, admin, node, fmt.Sprintf("%s-%d", node, j)) }
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func createNode(ctx context.Context, admin kubernetes.Interface, name string) error {
	_, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create node %s: %w", name, err)
	}
	return nil
}

// createPod creates pod name on node with its secret and configmap.
func createPod(ctx context.Context, admin kubernetes.Interface, node, name string) error {
	core := admin.CoreV1()
	meta := metav1.ObjectMeta{Name: name, Namespace: fleetNamespace}
	if _, err := core.Secrets(fleetNamespace).Create(ctx, &corev1.Secret{ObjectMeta: meta,
		Data: map[string][]byte{"token": []byte(name)}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create secret %s: %w", name, err)
	}
	if _, err := core.ConfigMaps(fleetNamespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta,
		Data: map[string]string{"config": name}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create configmap %s: %w", name, err)
	}
	pod := &corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{
		NodeName:   node,
		Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		Volumes: []corev1.Volume{
			{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}},
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: name}}}},
		},
	}}
	if _, err := core.Pods(fleetNamespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create pod %s: %w", name, err)
	}
	return nil
}
