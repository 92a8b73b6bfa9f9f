package holding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/apiserver-lite/apiserver-lite/pkg/door/satoken"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// keyReaderTokenSeconds is the lifetime asked of a token minted to read
// the cloud's keys: kube's minimum, as it is used once.
const keyReaderTokenSeconds = 600

// maxMintAttempts bounds the pods tried when minting a token to read the
// cloud's service-account keys.
const maxMintAttempts = 3

// mirrorPodAnnotation marks a static pod's mirror, which has no service
// account token.
const mirrorPodAnnotation = "kubernetes.io/config.mirror"

// errNoPodForToken is returned when no held pod can have a token minted.
var errNoPodForToken = errors.New("no pod on this node to mint a token for")

// podMeta is what the verifier and the minter read of a held pod.
type podMeta struct {
	Metadata struct {
		Namespace         string            `json:"namespace"`
		Name              string            `json:"name"`
		UID               string            `json:"uid"`
		DeletionTimestamp *metav1.Time      `json:"deletionTimestamp"`
		Annotations       map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		ServiceAccountName string `json:"serviceAccountName"`
	} `json:"spec"`
}

func podsCache(caches []*versioncache.Cache) *versioncache.Cache {
	for _, c := range caches {
		if c.GVR() == PodsGVR {
			return c
		}
	}
	return nil
}

// PodGetter finds the node's held pods for the service-account token
// verifier: satoken.ErrPodNotFound for a pod it does not hold, another
// error while the pods are not synced (or not held at all).
func PodGetter(caches []*versioncache.Cache) satoken.PodGetter {
	cache := podsCache(caches)
	return func(ns, name string) (satoken.Pod, error) {
		if cache == nil {
			return satoken.Pod{}, errors.New("the node's pods are not held")
		}
		obj, _, err := cache.Get(ns, name)
		switch {
		case err != nil:
			return satoken.Pod{}, err
		case obj == nil:
			return satoken.Pod{}, satoken.ErrPodNotFound
		}
		var m podMeta
		if err := json.Unmarshal(obj.Raw, &m); err != nil {
			return satoken.Pod{}, fmt.Errorf("decode pod %s/%s: %w", ns, name, err)
		}
		p := satoken.Pod{UID: m.Metadata.UID}
		if ts := m.Metadata.DeletionTimestamp; ts != nil {
			t := ts.Time
			p.DeletionTimestamp = &t
		}
		return p, nil
	}
}

// TokenPod is a pod a token is minted for, with its service account.
type TokenPod struct {
	Namespace, Name, UID, ServiceAccount string
}

// TokenCreator requests a token for a pod's service account, bound to
// the pod, with the cloud's default audiences (the node's credentials:
// kube's Node authorizer allows exactly this).
type TokenCreator func(ctx context.Context, pod TokenPod) (satoken.Minted, error)

// NodeTokenCreator is a TokenCreator on cloud's credentials. The token
// lives keyReaderTokenSeconds and is used for one read.
func NodeTokenCreator(cloud *rest.Config) (TokenCreator, error) {
	cs, err := kubernetes.NewForConfig(cloud)
	if err != nil {
		return nil, fmt.Errorf("token client: %w", err)
	}
	return func(ctx context.Context, pod TokenPod) (satoken.Minted, error) {
		req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: new(int64(keyReaderTokenSeconds)),
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: types.UID(pod.UID)},
		}}
		got, err := cs.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, pod.ServiceAccount, req, metav1.CreateOptions{})
		if err != nil {
			return satoken.Minted{}, fmt.Errorf("request a token for %s/%s: %w", pod.Namespace, pod.ServiceAccount, err)
		}
		return satoken.Minted{Token: got.Status.Token, Audiences: got.Spec.Audiences}, nil
	}, nil
}

// KeyReaderMinter mints a token for the service account of one of the
// node's running pods (bound to it), with which the cloud's
// service-account keys can be read.
func KeyReaderMinter(caches []*versioncache.Cache, create TokenCreator) satoken.Minter {
	cache := podsCache(caches)
	return func(ctx context.Context) (satoken.Minted, error) {
		if cache == nil {
			return satoken.Minted{}, errNoPodForToken
		}
		objs, _, err := cache.List(versioncache.Predicate{})
		if err != nil {
			return satoken.Minted{}, fmt.Errorf("list the node's pods: %w", err)
		}
		var errs []error
		for _, obj := range objs {
			var m podMeta
			if json.Unmarshal(obj.Raw, &m) != nil || m.Metadata.DeletionTimestamp != nil ||
				m.Spec.ServiceAccountName == "" || m.Metadata.Annotations[mirrorPodAnnotation] != "" {
				continue
			}
			minted, err := create(ctx, TokenPod{Namespace: m.Metadata.Namespace, Name: m.Metadata.Name,
				UID: m.Metadata.UID, ServiceAccount: m.Spec.ServiceAccountName})
			if err == nil {
				return minted, nil
			}
			if errs = append(errs, err); len(errs) == maxMintAttempts {
				break
			}
		}
		return satoken.Minted{}, errors.Join(append(errs, errNoPodForToken)...)
	}
}
