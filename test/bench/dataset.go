//go:build e2e

package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// benchNamespace holds the data set.
const benchNamespace = "bench"

// Shape of one pod: podEnvVars environment variables of random 16-hex-digit
// values across two containers make about 9 KB of JSON after the cloud's
// defaulting; gzip shrinks them about 9-fold on the cloud link.
const (
	podEnvVars     = 54
	podContainers  = 2
	configMapBytes = 1024 // data bytes per configmap
	// loadWorkers is how many creates are in flight while loading.
	loadWorkers = 16
)

// SeqAnnotation carries the watch benchmark's update sequence number.
const SeqAnnotation = "bench.apiserver-lite.io/seq"

// dataset tracks how much of the data set the cloud holds.
type dataset struct {
	cloud kubernetes.Interface
	node  string
	// pods and configMaps are how many objects of each are created.
	pods, configMaps int
}

// grow creates pods and configmaps until the cloud holds the given counts.
func (d *dataset) grow(ctx context.Context, pods, configMaps int) error {
	type job struct {
		pod bool
		i   int
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan job)
	errs := make(chan error, loadWorkers)
	var wg sync.WaitGroup
	for range loadWorkers {
		wg.Go(func() {
			for j := range jobs {
				if err := d.create(ctx, j.pod, j.i); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		})
	}
	go func() {
		defer close(jobs)
		for i := d.pods; i < pods; i++ {
			select {
			case jobs <- job{true, i}:
			case <-ctx.Done():
				return
			}
		}
		for i := d.configMaps; i < configMaps; i++ {
			select {
			case jobs <- job{false, i}:
			case <-ctx.Done():
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	// The first error is enough; the others are its consequences.
	if err := <-errs; err != nil {
		return err
	}
	d.pods, d.configMaps = max(d.pods, pods), max(d.configMaps, configMaps)
	return nil
}

func (d *dataset) create(ctx context.Context, pod bool, i int) error {
	var err error
	if pod {
		_, err = d.cloud.CoreV1().Pods(benchNamespace).Create(ctx, benchPod(d.node, i), metav1.CreateOptions{})
	} else {
		_, err = d.cloud.CoreV1().ConfigMaps(benchNamespace).Create(ctx, benchConfigMap(i), metav1.CreateOptions{})
	}
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("load object %d: %w", i, err)
	}
	return nil
}

func podName(i int) string { return fmt.Sprintf("pod-%06d", i) }

// benchPod returns pod i, bound to node.
func benchPod(node string, i int) *corev1.Pod {
	r := rand.New(rand.NewPCG(uint64(i), 1))
	containers := make([]corev1.Container, podContainers)
	for c := range containers {
		env := make([]corev1.EnvVar, podEnvVars/podContainers)
		for e := range env {
			env[e] = corev1.EnvVar{Name: "BENCH_ENV_" + strconv.Itoa(e), Value: fmt.Sprintf("%016x", r.Uint64())}
		}
		containers[c] = corev1.Container{
			Name:  "c" + strconv.Itoa(c),
			Image: "registry.k8s.io/pause:3.10",
			Env:   env,
		}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        podName(i),
			Labels:      map[string]string{"app": "app-" + strconv.Itoa(i%50), "bench": "true"},
			Annotations: map[string]string{SeqAnnotation: "-1"},
		},
		Spec: corev1.PodSpec{NodeName: node, Containers: containers},
	}
}

// benchConfigMap returns configmap i.
func benchConfigMap(i int) *corev1.ConfigMap {
	r := rand.New(rand.NewPCG(uint64(i), 2))
	data := make([]byte, configMapBytes/2)
	for j := range data {
		data[j] = byte(r.Uint32())
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%06d", i)},
		Data:       map[string]string{"data": fmt.Sprintf("%x", data)},
	}
}
