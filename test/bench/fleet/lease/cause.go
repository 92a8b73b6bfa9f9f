//go:build e2e

package lease

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// CauseMax bounds a cause's length in the report, in bytes.
const CauseMax = 120

var (
	// addrPattern matches the host:port pairs in a network error and
	// nodePattern the fleet's node names, which differ from node to node
	// and would split one cause into many.
	addrPattern = regexp.MustCompile(`\[?[0-9a-fA-F.:]+\]?:[0-9]+`)
	nodePattern = regexp.MustCompile(`fleet-[0-9]+`)
)

// Cause names err the same way for every node: an API status as its
// code, reason and message; a transport error as its method and cause,
// without the URL; addresses and node names replaced.
func Cause(err error) string {
	if err == nil {
		return "no error"
	}
	var status apierrors.APIStatus
	var ue *url.Error
	var cause string
	switch {
	case errors.As(err, &status):
		st := status.Status()
		cause = fmt.Sprintf("HTTP %d %s: %s", st.Code, st.Reason, st.Message)
	case errors.As(err, &ue):
		cause = fmt.Sprintf("no HTTP status: %s: %v", ue.Op, ue.Err)
	default:
		cause = "no HTTP status: " + err.Error()
	}
	return truncateCause(nodePattern.ReplaceAllString(addrPattern.ReplaceAllString(cause, "ADDR"), "NODE"))
}

func truncateCause(s string) string {
	if len(s) <= CauseMax {
		return s
	}
	return strings.ToValidUTF8(s[:CauseMax], "") + "…"
}
