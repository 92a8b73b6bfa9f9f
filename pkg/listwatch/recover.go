package listwatch

import (
	"errors"
	"net/http"
	"runtime/debug"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
)

// recoverPanics answers a request whose handler panicked with a 500 Status
// and logs the panic, so one bad request cannot take the daemon down.
// http.ErrAbortHandler, the proxy's way to abort a response, passes through.
func (s *server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
				panic(v)
			}
			s.log.Error("panic serving request", "method", r.Method, "path", r.URL.Path,
				"panic", v, "stack", string(debug.Stack()))
			response.WriteError(w, apierrors.NewInternalError(errors.New("the server panicked serving the request")))
		}()
		next.ServeHTTP(w, r)
	})
}
