package door

import (
	authorizationv1 "k8s.io/api/authorization/v1"
)

const (
	// maxReviewedSelectorBytes bounds a label or field selector sent in a
	// SubjectAccessReview. A longer one is left out: the review then asks
	// about the unfiltered request, which allows no less, and the answer
	// itself is still filtered by the whole selector.
	maxReviewedSelectorBytes = 4 << 10
	// maxReviewedPathBytes bounds the path of a non-resource request
	// sent in a review; a longer one is refused without asking. kube's
	// non-resource paths are short.
	maxReviewedPathBytes = 4 << 10
)

// accessReview is the SubjectAccessReview asking whether u may do a, with
// caller-chosen selectors bounded.
func accessReview(u User, a attributes) *authorizationv1.SubjectAccessReview {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.Name, UID: u.UID, Groups: u.Groups,
	}}
	if len(u.Extra) > 0 {
		sar.Spec.Extra = make(map[string]authorizationv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			sar.Spec.Extra[k] = v
		}
	}
	if !a.ResourceRequest {
		sar.Spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: a.Path, Verb: a.Verb}
		return sar
	}
	ra := &authorizationv1.ResourceAttributes{Namespace: a.Namespace, Verb: a.Verb, Group: a.Group,
		Version: a.Version, Resource: a.Resource, Subresource: a.Subresource, Name: a.Name}
	if a.FieldSelector != "" && len(a.FieldSelector) <= maxReviewedSelectorBytes {
		ra.FieldSelector = &authorizationv1.FieldSelectorAttributes{RawSelector: a.FieldSelector}
	}
	if a.LabelSelector != "" && len(a.LabelSelector) <= maxReviewedSelectorBytes {
		ra.LabelSelector = &authorizationv1.LabelSelectorAttributes{RawSelector: a.LabelSelector}
	}
	sar.Spec.ResourceAttributes = ra
	return sar
}
