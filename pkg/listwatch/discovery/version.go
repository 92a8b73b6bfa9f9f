package discovery

import (
	"encoding/json"
	"net/http"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
)

// localVersion serves /version with the cloud's last known version.Info,
// encoded as kube-apiserver's WriteRawJSON does (indented, no trailing
// newline). While no version is known it answers 503, as the cloud's own
// answer is unreachable.
func (s *Server) localVersion(w http.ResponseWriter, _ *http.Request) {
	if s.version == nil {
		response.WriteError(w, response.CloudUnavailable())
		return
	}
	info, ok := s.version.Version()
	if !ok {
		response.WriteError(w, response.CloudUnavailable())
		return
	}
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		response.WriteError(w, err)
		return
	}
	response.WriteJSON(w, b)
}
