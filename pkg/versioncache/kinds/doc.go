// Package kinds is the one per-kind attributes table of apiserver-lite:
// for each kind, the field labels a field selector may name (as
// kube-apiserver's field label conversion function for the kind accepts
// them, with its aliases and its wording of a refusal) and how the values
// of those fields are read from an object's JSON (as the kind's
// ToSelectableFields in kube-apiserver's registry computes them).
//
// versioncache extracts every object's selectable fields through the
// table, and listwatch validates every request's field selector through
// the same table, so the two cannot disagree. Adding a kind is one entry
// in Builtin. A kind without an entry gets kube's default: metadata.name
// and metadata.namespace only.
//
// The walk that reads those fields with the object's header is
// pkg/jsonscan's: the table names each kind's fields as jsonscan Paths
// (Table.Paths makes it a jsonscan.Kinds), and ScanObject, ReadList and
// Fields bind the walk to the table.
package kinds
