// Package jsonscan reads Kubernetes objects' JSON in one walk, so that no
// byte is scanned twice: ScanObject validates an object as encoding/json
// would and decodes, on the way, the header every object carries
// (apiVersion, kind, metadata's namespace, name, resourceVersion, uid and
// labels) and the fields a kind's Paths name, with kube's decoding rules
// (case-sensitive keys, the last of repeated keys winning, objects
// merging). ReadList does the same for each item of a LIST page in the
// walk that splits the page; FrameScanner and SplitWatchEvent cut watch
// streams into objects by matching brackets, for that walk to read.
//
// Invariants: every input is untrusted; a value the walk accepts is one
// kube's decoder accepts, and the header it reads is the one the decoder
// would (FuzzScanObject, FuzzReadList and FuzzSplitWatchEvent check it
// against k8s.io/apimachinery's decoder); nesting is bounded as
// encoding/json bounds it; the input is never changed.
//
// It is a leaf: it imports nothing of the project's, so metastore and
// versioncache, leaves themselves, may both read a UID or a header with
// it. Which fields each kind reads, and what they mean for field
// selectors, is versioncache/kinds' table, given to the walk through the
// Kinds interface.
package jsonscan
