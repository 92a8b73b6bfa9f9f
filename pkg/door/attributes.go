package door

import (
	"net/http"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
)

// attributes are what a request asks; their JSON is a
// SubjectAccessReview's attributes and part of a stored decision's key.
type attributes = requestinfo.Attributes

// requestAttributes resolves r as kube-apiserver's RequestInfo does.
func requestAttributes(r *http.Request) attributes { return requestinfo.Resolve(r) }
