package negotiate

import "testing"

const aggregatedAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"

func TestDiscovery(t *testing.T) {
	for _, tc := range []struct {
		accept         string
		wantAggregated bool
		wantErr        bool
	}{
		{"", false, false},
		{aggregatedAccept, true, false},
		{"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", false, false},
		{kubectlAccept, false, false},
		{"application/vnd.kubernetes.protobuf", false, true},
		{"application/json;q=0", false, true},
	} {
		r := request(tc.accept, "")
		agg, err := AggregatedDiscovery(r), JSONOnly(r)
		if agg {
			err = nil
		}
		if agg != tc.wantAggregated || (err != nil) != tc.wantErr {
			t.Errorf("Accept %q: got aggregated=%v err=%v, want aggregated=%v error=%v", tc.accept, agg, err, tc.wantAggregated, tc.wantErr)
		}
	}
}
