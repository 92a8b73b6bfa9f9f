//go:build e2e

package upstream

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// rewatchDelay is the pause before re-opening an ended namespace watch.
const rewatchDelay = time.Second

// provisionServiceAccounts does the service account controller's part
// that the specs need, as no controller-manager runs here: each namespace
// gets ServiceAccount default, so pods can be created in it. It returns
// when ctx ends.
func provisionServiceAccounts(ctx context.Context, t *testing.T, c *framework.Cluster) {
	for ctx.Err() == nil {
		w, err := c.Admin.CoreV1().Namespaces().Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Logf("watch namespaces: %v", err)
			sleep(ctx, rewatchDelay)
			continue
		}
		for ev := range w.ResultChan() {
			ns, ok := ev.Object.(*corev1.Namespace)
			if !ok || ev.Type != watch.Added {
				continue
			}
			sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
			_, err := c.Admin.CoreV1().ServiceAccounts(ns.Name).Create(ctx, sa, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) && ctx.Err() == nil {
				t.Logf("create serviceaccount %s/default: %v", ns.Name, err)
			}
		}
		w.Stop()
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
