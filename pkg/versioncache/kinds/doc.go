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
// The package also reads objects' JSON in one walk (ScanObject): it
// validates the object as encoding/json would and decodes, on the way,
// the header every object carries and the fields its kind's Reader names,
// with kube's decoding rules (case-sensitive keys, the last of repeated
// keys winning, objects merging), so that no byte is scanned twice.
// ReadList does the same for each item of a LIST page in the walk that
// splits the page; FrameScanner and SplitWatchEvent cut watch streams
// into objects by matching brackets, for that walk to read.
package kinds
