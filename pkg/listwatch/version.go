package listwatch

import (
	"encoding/json"
	"net/http"
)

// localVersion serves /version with the cloud's last known version.Info,
// encoded as kube-apiserver's WriteRawJSON does (indented, no trailing
// newline). While no version is known it answers 503, as the cloud's own
// answer is unreachable.
func (s *server) localVersion(w http.ResponseWriter, _ *http.Request) {
	if s.version == nil {
		writeError(w, errCloudUnavailable())
		return
	}
	info, ok := s.version.Version()
	if !ok {
		writeError(w, errCloudUnavailable())
		return
	}
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, b)
}
