// Package encode turns cached objects into the bytes of the local API's
// answers, without knowing HTTP: list bodies concatenated from the
// objects' cached JSON, protobuf objects, lists and watch frames of
// built-in kinds (each encoded once and shared), meta.k8s.io Tables with
// the columns of package printers, PartialObjectMetadata for metadata
// clients, BOOKMARK objects and kube's continue tokens. Its inputs are a resource's GroupVersionResource and kind and
// versioncache objects and events.
package encode
