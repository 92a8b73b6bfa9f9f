package door

import (
	"fmt"
	"mime"
	"net/http"
)

// browserHeaders are sent by browsers (CORS and Fetch Metadata) and never
// by Kubernetes clients: a request carrying one is a web page's.
var browserHeaders = []string{"Origin", "Sec-Fetch-Site", "Sec-Fetch-Mode", "Sec-Fetch-Dest"}

// kubeContentTypes are the media types kube-apiserver decodes a body
// from. A browser's no-cors request can only send text/plain, form
// encodings or none, so requiring one of these keeps web pages out.
var kubeContentTypes = map[string]bool{
	"application/json":                       true,
	"application/yaml":                       true,
	"application/vnd.kubernetes.protobuf":    true,
	"application/cbor":                       true,
	"application/json-patch+json":            true,
	"application/merge-patch+json":           true,
	"application/strategic-merge-patch+json": true,
	"application/apply-patch+yaml":           true,
	"application/apply-patch+cbor":           true,
}

// refuseBrowsers answers 403 for a request a browser sent and 415 for a
// body without a Kubernetes content type, and reports whether r may go on.
func refuseBrowsers(w http.ResponseWriter, r *http.Request) bool {
	for _, h := range browserHeaders {
		if r.Header.Get(h) != "" {
			forbidden(w, fmt.Sprintf("the insecure door refuses requests sent by a web browser (%s header)", h))
			return false
		}
	}
	if !carriesBody(r) {
		return true
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || !kubeContentTypes[mt] {
		unsupportedMediaType(w, r.Header.Get("Content-Type"))
		return false
	}
	return true
}

// carriesBody is true for a method that sends one, or any request with a
// body.
func carriesBody(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		return true
	}
	return r.ContentLength > 0 || len(r.TransferEncoding) > 0
}
