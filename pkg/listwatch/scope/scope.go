package scope

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Field labels every kind's field selector accepts.
const (
	fieldName      = "metadata.name"
	fieldNamespace = "metadata.namespace"
)

// Held is the part of a resource the cloud sync lists and watches, as
// the local API is told it (listwatch.Config.Scopes); New parses its
// namespace and selectors.
type Held struct {
	Namespace     string // "" for all namespaces
	LabelSelector string
	FieldSelector string
	// Partial marks a resource held only in part, by name (secrets and
	// configmaps while a pod on the node references them): only a read
	// naming one held object is answered locally.
	Partial bool
	// OnRequest marks a resource held only while pods on the node read it
	// on their own identities: while its cache is not ready it is not
	// held, and reads of it are the cloud's (503 while the cloud is
	// unreachable), not "initializing"; it never fails readiness.
	OnRequest bool
}

// Synced is the part of one resource the cloud sync holds. The zero value
// holds the whole resource.
type Synced struct {
	namespace string          // "" for all namespaces
	label     labels.Selector // never nil
	field     fields.Selector // never nil
	// partial marks a sync that holds only some objects, chosen by name
	// (secrets and configmaps held while a pod on the node references
	// them): no selector describes what is held.
	partial bool
}

// Partial returns s marked as holding only some objects, chosen by name.
func (s Synced) Partial() Synced {
	s.partial = true
	return s
}

// IsPartial reports whether s holds only some objects, chosen by name.
func (s Synced) IsPartial() bool { return s.partial }

// ExactName returns the one name the request names, through its path or
// an exact metadata.name field selector.
func (r Request) ExactName() (string, bool) {
	if r.Name != "" {
		return r.Name, true
	}
	if r.Field == nil {
		return "", false
	}
	return r.Field.RequiresExactMatch(fieldName)
}

// New parses a sync's namespace and selectors, as cloudsync lists with
// them.
func New(namespace, labelSelector, fieldSelector string) (Synced, error) {
	l, err := labels.Parse(labelSelector)
	if err != nil {
		return Synced{}, fmt.Errorf("label selector %q: %w", labelSelector, err)
	}
	f, err := fields.ParseSelector(fieldSelector)
	if err != nil {
		return Synced{}, fmt.Errorf("field selector %q: %w", fieldSelector, err)
	}
	return Synced{namespace: namespace, label: l, field: f}, nil
}

// Whole reports whether the sync holds every object of the resource.
func (s Synced) Whole() bool {
	return !s.partial && s.namespace == "" && (s.label == nil || s.label.Empty()) && (s.field == nil || s.field.Empty())
}

// Field is the synced field selector, for callers that convert its labels
// (aliases) as they convert a request's.
func (s Synced) Field() fields.Selector {
	if s.field == nil {
		return fields.Everything()
	}
	return s.field
}

// WithField returns s with its field selector replaced by f (the synced
// selector after label conversion).
func (s Synced) WithField(f fields.Selector) Synced {
	s.field = f
	return s
}

// Request is the scope a read names: the namespace of its path ("" for all
// namespaces or a cluster-scoped resource), the name of a get, and a list's
// or watch's selectors (nil for none), field labels already converted.
type Request struct {
	Namespace string
	Name      string
	Label     labels.Selector
	Field     fields.Selector
}

// Covers reports whether every object the request can name lies within
// the synced scope, so that the cache's answer, an empty one or a 404
// included, is the cloud's. It is conservative: a request whose selectors
// do not provably imply the synced ones is not covered.
func (s Synced) Covers(r Request) bool {
	if s.partial {
		return false // only the caller knows which names are held
	}
	if s.namespace != "" && !r.requires(fieldNamespace, s.namespace) {
		return false
	}
	if s.label != nil {
		synced, _ := s.label.Requirements()
		for _, want := range synced {
			if !r.hasLabelRequirement(want) {
				return false
			}
		}
	}
	if s.field != nil {
		for _, want := range s.field.Requirements() {
			if !r.impliesField(want) {
				return false
			}
		}
	}
	return true
}

// requires reports whether the request only names objects whose field is
// value: through its path (namespace, name) or an exact field selector.
func (r Request) requires(field, value string) bool {
	switch {
	case field == fieldNamespace && r.Namespace != "":
		return r.Namespace == value
	case field == fieldName && r.Name != "":
		return r.Name == value
	}
	if r.Field == nil {
		return false
	}
	v, ok := r.Field.RequiresExactMatch(field)
	return ok && v == value
}

// impliesField reports whether the request implies one synced field
// requirement: the same exact value for =, and for != either the same
// requirement or an exact other value.
func (r Request) impliesField(want fields.Requirement) bool {
	switch want.Operator {
	case selection.Equals, selection.DoubleEquals:
		return r.requires(want.Field, want.Value)
	case selection.NotEquals:
		if r.Field != nil {
			for _, got := range r.Field.Requirements() {
				if got.Operator == selection.NotEquals && got.Field == want.Field && got.Value == want.Value {
					return true
				}
			}
		}
		return r.requiresOther(want.Field, want.Value)
	}
	return false
}

// requiresOther reports whether the request names only objects whose
// field has one exact value other than value.
func (r Request) requiresOther(field, value string) bool {
	switch {
	case field == fieldNamespace && r.Namespace != "":
		return r.Namespace != value
	case field == fieldName && r.Name != "":
		return r.Name != value
	}
	if r.Field == nil {
		return false
	}
	v, ok := r.Field.RequiresExactMatch(field)
	return ok && v != value
}

// hasLabelRequirement reports whether the request's label selector carries
// want itself.
func (r Request) hasLabelRequirement(want labels.Requirement) bool {
	if r.Label == nil {
		return false
	}
	got, _ := r.Label.Requirements()
	for _, g := range got {
		if g.Equal(want) {
			return true
		}
	}
	return false
}

// Describe names the synced scope of resource for people, as in
// "pods with spec.nodeName=node-a".
func (s Synced) Describe(resource string) string {
	var parts []string
	if s.namespace != "" {
		parts = append(parts, "in namespace "+s.namespace)
	}
	if s.field != nil && !s.field.Empty() {
		parts = append(parts, "with "+s.field.String())
	}
	if s.label != nil && !s.label.Empty() {
		parts = append(parts, "labelled "+s.label.String())
	}
	if s.partial {
		parts = append(parts, "referenced by pods on this node")
	}
	return strings.Join(append([]string{resource}, parts...), " ")
}
