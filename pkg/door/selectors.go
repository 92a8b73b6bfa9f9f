package door

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// normalized returns a with its selectors in canonical form (requirements
// parsed and sorted), so that one question asked with its selector terms
// in another order or spacing is one cached decision. A selector that does
// not parse is kept as sent: the cloud judges it.
func normalized(a attributes) attributes {
	if a.LabelSelector != "" {
		if sel, err := labels.Parse(a.LabelSelector); err == nil {
			a.LabelSelector = sel.String()
		}
	}
	if a.FieldSelector != "" {
		if sel, err := fields.ParseSelector(a.FieldSelector); err == nil {
			a.FieldSelector = canonicalFields(sel)
		}
	}
	return a
}

// canonicalFields writes sel's requirements sorted, in the selector syntax
// fields.ParseSelector reads back.
func canonicalFields(sel fields.Selector) string {
	reqs := sel.Requirements()
	terms := make([]string, 0, len(reqs))
	for _, r := range reqs {
		op := "="
		if r.Operator == "!=" {
			op = "!="
		}
		terms = append(terms, r.Field+op+fields.EscapeValue(r.Value))
	}
	slices.Sort(terms)
	return strings.Join(terms, ",")
}
