//go:build tools

package release

import _ "github.com/goreleaser/nfpm/v2/cmd/nfpm"
