package listwatch

import (
	"net/http"
	"testing"
)

// FuzzChooseMedia feeds arbitrary Accept headers to the conversion
// negotiation: it must not panic, and it only ever picks a conversion the
// endpoint offers.
func FuzzChooseMedia(f *testing.F) {
	for _, seed := range []string{kubectlAccept, aggregatedAccept, v2Accept + ";profile=nopeer", "", "*/*",
		"application/json;as=Table;v=v1;g=meta.k8s.io;q=0", "application/json;;;,,", `application/json;as="Table"`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		r := &http.Request{Header: http.Header{"Accept": {accept}}}
		if ch := chooseMedia(r, resourceEndpoint); ch.convert == convertAggregated ||
			(ch.convert == convertTable && ch.version != "v1" && ch.version != "v1beta1") {
			t.Errorf("resource endpoint, Accept %q: got %+v, want no conversion or a v1/v1beta1 Table", accept, ch)
		}
		if ch := chooseMedia(r, discoveryEndpoint); ch.convert == convertTable {
			t.Errorf("discovery endpoint, Accept %q: got a Table", accept)
		}
	})
}
