//go:build e2e

package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// HeldSystemNS holds the components' service accounts and pods.
const HeldSystemNS = "kube-system"

// heldComponent is one system component on the node: its service account,
// the ClusterRole it is bound to, and its pod.
type heldComponent struct {
	sa, role string
}

// heldComponents read services and EndpointSlices, in the order they
// start: kube-proxy (system:node-proxier), CoreDNS and node-local DNS
// (both system:coredns, the upstream manifests' rules).
var heldComponents = [heldReaders]heldComponent{
	{"kube-proxy", "system:node-proxier"},
	{"coredns", "system:coredns"},
	{"node-local-dns", "system:coredns"},
}

// corednsRole is the upstream system:coredns ClusterRole.
var corednsRole = rbacv1.ClusterRole{
	ObjectMeta: metav1.ObjectMeta{Name: "system:coredns"},
	Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
	},
}

// createComponents creates the node, the components' RBAC, service
// accounts and pods bound to the node, and returns a token bound to each
// pod, in heldComponents' order.
func createComponents(ctx context.Context, cs kubernetes.Interface, node string) ([]string, error) {
	if err := IgnoreExists(cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{})); err != nil {
		return nil, fmt.Errorf("create node: %w", err)
	}
	if err := IgnoreExists(cs.RbacV1().ClusterRoles().Create(ctx, &corednsRole, metav1.CreateOptions{})); err != nil {
		return nil, fmt.Errorf("create role: %w", err)
	}
	var tokens []string
	for _, comp := range heldComponents {
		token, err := createComponent(ctx, cs, node, comp)
		if err != nil {
			return nil, fmt.Errorf("component %s: %w", comp.sa, err)
		}
		tokens = append(tokens, token)
	}
	return tokens, nil
}

// createComponent creates one component's binding, service account and
// pod, and returns a token bound to the pod.
func createComponent(ctx context.Context, cs kubernetes.Interface, node string, comp heldComponent) (string, error) {
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bench:" + comp.sa},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: comp.role},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: comp.sa, Namespace: HeldSystemNS}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	return podToken(ctx, cs, HeldSystemNS, comp.sa, comp.sa+"-"+node, node)
}

// podToken creates service account ns/sa (unless it exists) and its pod
// name bound to node, and returns a token bound to that pod.
func podToken(ctx context.Context, cs kubernetes.Interface, ns, sa, name, node string) (string, error) {
	if err := IgnoreExists(cs.CoreV1().ServiceAccounts(ns).Create(ctx,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})); err != nil {
		return "", err
	}
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{NodeName: node, ServiceAccountName: sa,
			Containers: []corev1.Container{{Name: sa, Image: "registry.k8s.io/pause:3.10"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{
			Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}}}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return tr.Status.Token, nil
}

// IgnoreExists is err, or nil when err says the object already exists;
// it takes a create's two results.
func IgnoreExists[T any](_ T, err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// SeedServices creates n services in HeldNamespace, each with one
// EndpointSlice of heldEndpoints endpoints, loadWorkers at a time.
func SeedServices(ctx context.Context, cs kubernetes.Interface, n int) error {
	return forEachParallel(n, func(i int) error { return createService(ctx, cs, i) })
}

// forEachParallel calls f for 0..n-1, loadWorkers at a time, and returns
// the workers' errors joined; a worker that failed makes no further calls.
func forEachParallel(n int, f func(i int) error) error {
	var wg sync.WaitGroup
	jobs := make(chan int)
	errs := make([]error, loadWorkers)
	for w := range loadWorkers {
		wg.Go(func() {
			for i := range jobs {
				if errs[w] == nil {
					errs[w] = f(i)
				}
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return errors.Join(errs...)
}

// HeldServiceName is the name of the data set's i-th service.
func HeldServiceName(i int) string { return fmt.Sprintf("svc-%05d", i) }

// createService creates service i and its EndpointSlice.
func createService(ctx context.Context, cs kubernetes.Interface, i int) error {
	name := HeldServiceName(i)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}},
	}
	if _, err := cs.CoreV1().Services(HeldNamespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create service %s: %w", name, err)
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-abcde", Labels: map[string]string{
			discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	for e := range heldEndpoints {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{fmt.Sprintf("10.%d.%d.%d", 64+e, i/250%250, i%250+1)},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)},
			NodeName:   ptr.To(fmt.Sprintf("node-%03d", (i+e)%100)),
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: HeldNamespace, Name: fmt.Sprintf("%s-%d", name, e)},
		})
	}
	if _, err := cs.DiscoveryV1().EndpointSlices(HeldNamespace).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create endpointslice %s: %w", slice.Name, err)
	}
	return nil
}

// sliceJSONBytes is the mean JSON size of the cloud's EndpointSlices in
// HeldNamespace.
func sliceJSONBytes(ctx context.Context, cs kubernetes.Interface) (int, error) {
	l, err := cs.DiscoveryV1().EndpointSlices(HeldNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("list endpointslices: %w", err)
	}
	var n int
	for i := range l.Items {
		b, err := json.Marshal(&l.Items[i])
		if err != nil {
			return 0, err
		}
		n += len(b)
	}
	if len(l.Items) == 0 {
		return 0, nil
	}
	return n / len(l.Items), nil
}

// churn updates one EndpointSlice after another, perSec a second, until
// ctx ends, and returns how many updates the cloud accepted.
func churn(ctx context.Context, cs kubernetes.Interface, services, perSec int, seq *int) (int, error) {
	tick := time.NewTicker(time.Second / time.Duration(perSec))
	defer tick.Stop()
	done := 0
	for {
		select {
		case <-ctx.Done():
			return done, nil
		case <-tick.C:
		}
		*seq++
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, SeqAnnotation, strconv.Itoa(*seq))
		name := HeldServiceName(*seq%services) + "-abcde"
		_, err := cs.DiscoveryV1().EndpointSlices(HeldNamespace).Patch(context.WithoutCancel(ctx), name,
			types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		if err != nil {
			return done, fmt.Errorf("update endpointslice %s: %w", name, err)
		}
		done++
	}
}
