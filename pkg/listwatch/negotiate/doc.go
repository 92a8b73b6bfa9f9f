// Package negotiate is the one place a request's Accept and
// Accept-Encoding headers and its Table options (includeObject, noHeaders)
// are read. It follows kube-apiserver's handlers/negotiation: the first
// Accept clause, in preference order, that a serializer and the endpoint
// can serve wins, its as=, g= and v= parameters asking for a conversion
// (Table, PartialObjectMetadata, aggregated discovery); nothing acceptable is kube's 406 listing
// the supported media types.
//
// The outcome is an immutable response.Responder that the handlers write
// every answer, error and watch frame through.
package negotiate
