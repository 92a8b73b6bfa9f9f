//go:build e2e

package apf

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Names names the priority levels of uids (a response's
// X-Kubernetes-PF-PriorityLevel-UID), from the cloud's
// PriorityLevelConfigurations; an unknown UID stays as it is.
func Names(ctx context.Context, cs kubernetes.Interface, uids []string) ([]string, error) {
	list, err := cs.FlowcontrolV1().PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return uids, fmt.Errorf("priority levels: %w", err)
	}
	var out []string
	for _, uid := range uids {
		name := uid
		for _, pl := range list.Items {
			if string(pl.UID) == uid {
				name = pl.Name
			}
		}
		out = append(out, name)
	}
	return out, nil
}
