// Package response writes the local API's answers: metav1.Status errors
// (built with k8s.io/apimachinery/pkg/api/errors), 200 bodies, watch stream
// headers and frames, and the media types they are written in.
//
// Its central value is the Responder, the outcome of content negotiation
// (package negotiate): the media type, the stream framing, the Table
// conversion and whether large bodies are gzipped. Every handler writes
// through it, so a request's answer, its errors and its watch frames share
// one encoding.
//
// It is the lowest layer of pkg/listwatch and imports none of its other
// packages.
package response
