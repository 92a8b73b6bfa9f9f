package kinds

import (
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// notExtracted are labels kube's conversion accepts that its
// ToSelectableFields never sets, so they select as "".
var notExtracted = map[schema.GroupKind]map[string]bool{
	{Kind: "Pod"}: {"status.podIPs": true},
}

// Every label a kind accepts, directly or through an alias, is a field its
// objects carry: the table cannot promise a field it does not extract.
func TestAcceptedLabelsAreExtracted(t *testing.T) {
	for gk, k := range Builtin {
		t.Run(gk.String(), func(t *testing.T) {
			fs, err := Builtin.SelectableFields(gk, "ns", "n", []byte(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			want := k.Labels.UnsortedList()
			for _, target := range k.Aliases {
				want = append(want, target)
			}
			for _, label := range want {
				if _, ok := fs[label]; !ok && !notExtracted[gk][label] && label != FieldNamespace {
					t.Errorf("label %q accepted but not extracted (got %v)", label, fs)
				}
			}
			if got, max := len(fs), metaFieldCount+k.ExtraFields; got > max {
				t.Errorf("got %d fields, ExtraFields sizes for %d", got, max)
			}
		})
	}
}

func TestConvertFieldSelector(t *testing.T) {
	core := func(kind string) schema.GroupKind { return schema.GroupKind{Kind: kind} }
	tests := []struct {
		gk      schema.GroupKind
		sel     string
		want    string // the converted selector; "" when an error is wanted
		wantErr string
	}{
		{core("Pod"), "spec.host=n1", "spec.nodeName=n1", ""},
		{core("Pod"), "spec.nodeName=n1,status.phase!=Failed", "spec.nodeName=n1,status.phase!=Failed", ""},
		{core("Pod"), "spec.foo=x", "", "field label not supported: spec.foo"},
		{core("Node"), "metadata.namespace=x", "", "field label not supported: metadata.namespace"},
		{core("Namespace"), "name=x", "", "field label not supported: name"},
		{core("Secret"), "type=Opaque", "type=Opaque", ""},
		{core("Service"), "spec.clusterIP!=None", "spec.clusterIP!=None", ""},
		{core("ReplicationController"), "status.replicas=1", "status.replicas=1", ""},
		{core("Event"), "involvedObject.name=p,source=kubelet", "involvedObject.name=p,source=kubelet", ""},
		{core("Event"), "regarding.name=p", "", "field label not supported: regarding.name"},
		{schema.GroupKind{Group: "events.k8s.io", Kind: "Event"}, "regarding.name=p,reportingController=k",
			"involvedObject.name=p,reportingComponent=k", ""},
		{schema.GroupKind{Group: "events.k8s.io", Kind: "Event"}, "source=x", "", "field label not supported: source"},
		{schema.GroupKind{Group: "batch", Kind: "Job"}, "spec.foo=x", "", `field label "spec.foo" not supported for Job`},
		{schema.GroupKind{Group: "resource.k8s.io", Kind: "ResourceSlice"}, "spec.foo=x", "",
			"field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.foo"},
		{core("ConfigMap"), "metadata.namespace=a", "metadata.namespace=a", ""},
		{core("ConfigMap"), "type=x", "", `"type" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{schema.GroupKind{Group: "example.com", Kind: "Pod"}, "spec.nodeName=x", "",
			`"spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace"`},
	}
	for _, tt := range tests {
		t.Run(tt.gk.String()+" "+tt.sel, func(t *testing.T) {
			sel, err := fields.ParseSelector(tt.sel)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Builtin.ConvertFieldSelector(tt.gk, sel)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got %v, %v, want error %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got.String() != tt.want {
				t.Errorf("got %v, %v, want %q", got, err, tt.want)
			}
		})
	}
}

func TestSelectableFields(t *testing.T) {
	tests := []struct {
		gk   schema.GroupKind
		raw  string
		want fields.Set
	}{
		{schema.GroupKind{Kind: "Event"},
			`{"involvedObject":{"kind":"Pod","name":"p","namespace":"ns","uid":"u","apiVersion":"v1","resourceVersion":"3","fieldPath":"f"},"reason":"Pulled","reportingComponent":"kubelet","type":"Normal"}`,
			fields.Set{"involvedObject.kind": "Pod", "involvedObject.name": "p", "involvedObject.namespace": "ns",
				"involvedObject.uid": "u", "involvedObject.apiVersion": "v1", "involvedObject.resourceVersion": "3",
				"involvedObject.fieldPath": "f", "reason": "Pulled", "reportingComponent": "kubelet", "source": "kubelet", "type": "Normal"}},
		{schema.GroupKind{Group: "events.k8s.io", Kind: "Event"},
			`{"regarding":{"kind":"Node","name":"n"},"reason":"R","reportingController":"c","deprecatedSource":{"component":"s"},"type":"Warning"}`,
			fields.Set{"involvedObject.kind": "Node", "involvedObject.name": "n", "involvedObject.namespace": "",
				"involvedObject.uid": "", "involvedObject.apiVersion": "", "involvedObject.resourceVersion": "",
				"involvedObject.fieldPath": "", "reason": "R", "reportingComponent": "c", "source": "s", "type": "Warning"}},
		{schema.GroupKind{Kind: "Pod"}, `{"spec":{"serviceAccount":"old"},"status":{"podIP":"10.0.0.1","podIPs":[{"ip":"10.0.0.2"}]}}`,
			fields.Set{"spec.nodeName": "", "spec.restartPolicy": "", "spec.schedulerName": "", "spec.serviceAccountName": "old",
				"spec.hostNetwork": "false", "status.phase": "", "status.podIP": "10.0.0.1", "status.nominatedNodeName": ""}},
		{schema.GroupKind{Kind: "Node"}, `{"spec":{"unschedulable":true}}`, fields.Set{"spec.unschedulable": "true"}},
		{schema.GroupKind{Kind: "Namespace"}, `{"metadata":{"name":"n"},"status":{"phase":"Active"}}`,
			fields.Set{"status.phase": "Active", "name": "n"}},
		{schema.GroupKind{Kind: "ReplicationController"}, `{"status":{"replicas":3}}`, fields.Set{"status.replicas": "3"}},
		{schema.GroupKind{Group: "batch", Kind: "Job"}, `{"status":{"succeeded":2}}`, fields.Set{"status.successful": "2"}},
		{schema.GroupKind{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}, `{"spec":{"signerName":"s"}}`,
			fields.Set{"spec.signerName": "s"}},
		{schema.GroupKind{Group: "resource.k8s.io", Kind: "ResourceSlice"}, `{"spec":{"driver":"d"}}`,
			fields.Set{"spec.nodeName": "", "spec.driver": "d"}},
		{schema.GroupKind{Kind: "ConfigMap"}, `{"data":{"type":"x"}}`, fields.Set{}},
	}
	for _, tt := range tests {
		t.Run(tt.gk.String(), func(t *testing.T) {
			got, err := Builtin.SelectableFields(tt.gk, "ns", "name", []byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			want := fields.Set{FieldName: "name", FieldNamespace: "ns"}
			for k, v := range tt.want {
				want[k] = v
			}
			if got.String() != want.String() {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}
