//go:build e2e

package conformance

import "net/http"

// rowKind says how a row is run.
type rowKind int

const (
	requestRow  rowKind = iota // one HTTP request, one answer
	watchRow                   // a watch stream, then changes through the cloud
	kubectlRow                 // the built kubectl
	informerRow                // a client-go informer in a child process
)

// aspect names a part of an answer the comparator checks separately.
type aspect string

const (
	aspectStatus      aspect = "status"       // code, reason, cause types and fields
	aspectMediaType   aspect = "media type"   // Content-Type without parameters
	aspectBody        aspect = "body"         // kind and objects
	aspectEvents      aspect = "events"       // watch frames
	aspectKubectl     aspect = "kubectl"      // kubectl's output
	aspectSync        aspect = "synced state" // an informer's keys and RVs
	aspectConsistency aspect = "consistency detector"
)

// Placeholders in paths and queries, filled in per run.
const (
	phNamespace = "{ns}"      // the fixture namespace
	phNode      = "{node}"    // the edge's node
	phRV        = "{rv}"      // RV of the suite's last write to the row's resource
	phFirstRV   = "{firstrv}" // RV of the suite's first write to the row's resource
	phWatchNS   = "{wns}"     // a namespace of the row's own, with one configmap "marker"
)

// Accept headers the rows send.
const (
	acceptProtobuf    = "application/vnd.kubernetes.protobuf,application/json"
	acceptTable       = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
	acceptAggregated  = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
	acceptPartial     = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
	acceptPartialList = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
)

// row is one conformance case. Fields beyond name and kind apply to the
// kinds named in their comments.
type row struct {
	name string
	kind rowKind
	// resource is the plural the row reads, for the catch-up wait.
	resource string

	// request: path (with placeholders), raw query and Accept header.
	path   string
	query  string
	accept string
	// wantCode is the status both sides must answer (request rows; watch
	// rows: the stream's HTTP status). wantReason and wantCause, when set,
	// are the Status reason and one cause type the cloud must give.
	wantCode   int
	wantReason string
	wantCause  string

	// watch: the changes to make after both watches are open, and the
	// event types the cloud must deliver (BOOKMARKs excluded unless
	// wantBookmark).
	changes      []change
	wantEvents   []string
	wantBookmark bool
	// fromList starts each side's watch from its own list RV.
	fromList bool
	// untilEnd reads the stream until the server ends it.
	untilEnd bool

	// kubectl: the arguments after --kubeconfig.
	kubectl []string

	// informer: whether the child enables client-go's WatchListClient.
	watchList bool

	// knownDifference justifies why differsIn still differs today.
	knownDifference string
	differsIn       aspect
}

// change is one write through the cloud during a watch row.
type change struct {
	op     string            // create, update, relabel, delete
	name   string            // configmap name in the row's namespace
	labels map[string]string // for create and relabel
}

// Why rows differ today. Each names the feature whose absence it records.
const (
	whyExact   = "Exact history reaches back only as far as the edge's event ring and never before its first sync (this RV predates it): apiserver-lite answers 410 there, kube-apiserver serves it from etcd until compaction"
	whyGetRV   = "kube-apiserver answers a GET with a malformed resourceVersion with 500 InternalError; apiserver-lite answers 400 BadRequest, as both do for a LIST (clients never send one)"
	whyHistory = "by design: apiserver-lite's event history starts at its initial list from the cloud, so a watch from an older RV gets ERROR 410 Expired (clients relist) where kube-apiserver's watch cache, in a fresh cluster, still holds those events and replays them"
)

const (
	cmPath  = "/api/v1/namespaces/{ns}/configmaps"
	podPath = "/api/v1/namespaces/{ns}/pods"
	nsPath  = "/api/v1/namespaces"
	nodPath = "/api/v1/nodes"
	wcmPath = "/api/v1/namespaces/{wns}/configmaps"
)

// rows is the suite. Every row runs against both servers.
var rows = []row{
	// GET
	{name: "configmaps GET found", resource: "configmaps", path: cmPath + "/cm-a", wantCode: 200},
	{name: "configmaps GET not found", resource: "configmaps", path: cmPath + "/missing", wantCode: 404, wantReason: "NotFound"},
	{name: "configmaps GET resourceVersion=0", resource: "configmaps", path: cmPath + "/cm-a", query: "resourceVersion=0", wantCode: 200},
	{name: "configmaps GET resourceVersion=N", resource: "configmaps", path: cmPath + "/cm-a", query: "resourceVersion={rv}", wantCode: 200},
	{name: "configmaps GET resourceVersion=abc", resource: "configmaps", path: cmPath + "/cm-a", query: "resourceVersion=abc", wantCode: 500,
		knownDifference: whyGetRV, differsIn: aspectStatus},
	{name: "configmaps GET too large resourceVersion", resource: "configmaps", path: cmPath + "/cm-a", query: "resourceVersion=99999999999", wantCode: 504, wantReason: "Timeout", wantCause: "ResourceVersionTooLarge"},
	{name: "namespaces GET found", resource: "namespaces", path: nsPath + "/{ns}", wantCode: 200},
	{name: "namespaces GET not found", resource: "namespaces", path: nsPath + "/missing", wantCode: 404, wantReason: "NotFound"},
	{name: "nodes GET own node", resource: "nodes", path: nodPath + "/{node}", wantCode: 200},
	{name: "nodes GET missing node", resource: "nodes", path: nodPath + "/missing", wantCode: 404, wantReason: "NotFound"},
	{name: "nodes GET other node (not synced: the cloud answers)", resource: "nodes", path: nodPath + "/other-node", wantCode: 200},
	{name: "pods GET own node's pod", resource: "pods", path: podPath + "/pod-edge", wantCode: 200},
	{name: "pods GET other node's pod (not synced: the cloud answers)", resource: "pods", path: podPath + "/pod-other", wantCode: 200},
	{name: "pods GET other node's pod Accept Table", resource: "pods", path: podPath + "/pod-other", accept: acceptTable, wantCode: 200},

	// LIST: resourceVersion
	{name: "configmaps LIST resourceVersion unset", resource: "configmaps", path: cmPath, wantCode: 200},
	{name: "configmaps LIST resourceVersion=0", resource: "configmaps", path: cmPath, query: "resourceVersion=0", wantCode: 200},
	{name: "configmaps LIST resourceVersion=N", resource: "configmaps", path: cmPath, query: "resourceVersion={rv}", wantCode: 200},
	{name: "configmaps LIST resourceVersion=N NotOlderThan", resource: "configmaps", path: cmPath, query: "resourceVersion={rv}&resourceVersionMatch=NotOlderThan", wantCode: 200},
	{name: "configmaps LIST resourceVersion=N Exact current", resource: "configmaps", path: cmPath, query: "resourceVersion={rv}&resourceVersionMatch=Exact", wantCode: 200},
	{name: "configmaps LIST resourceVersion=N Exact older", resource: "configmaps", path: cmPath, query: "resourceVersion={firstrv}&resourceVersionMatch=Exact", wantCode: 200,
		knownDifference: whyExact, differsIn: aspectStatus},
	{name: "configmaps LIST all namespaces", resource: "configmaps", path: "/api/v1/configmaps", wantCode: 200},
	{name: "configmaps LIST namespace that does not exist", resource: "configmaps", path: "/api/v1/namespaces/no-such-ns/configmaps", wantCode: 200},
	{name: "configmaps LIST resourceVersion=abc", resource: "configmaps", path: cmPath, query: "resourceVersion=abc", wantCode: 400, wantReason: "BadRequest"},
	{name: "configmaps LIST too large resourceVersion", resource: "configmaps", path: cmPath, query: "resourceVersion=99999999999", wantCode: 504, wantReason: "Timeout", wantCause: "ResourceVersionTooLarge"},
	{name: "configmaps LIST limit=1", resource: "configmaps", path: cmPath, query: "limit=1", wantCode: 200},
	{name: "configmaps LIST malformed continue token", resource: "configmaps", path: cmPath, query: "limit=1&continue=not-a-token", wantCode: 400, wantReason: "BadRequest"},
	{name: "configmaps LIST continue token with a future RV", resource: "configmaps", path: cmPath,
		query: "limit=1&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTk5OTk5OTk5OTksInN0YXJ0IjoiL2NtLWFcdTAwMDAifQ", wantCode: 504, wantReason: "Timeout", wantCause: "ResourceVersionTooLarge"},
	{name: "configmaps LIST continue with resourceVersion=N", resource: "configmaps", path: cmPath,
		query: "limit=1&resourceVersion={rv}&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIvY20tYVx1MDAwMCJ9", wantCode: 400, wantReason: "BadRequest"},

	// LIST: resourceVersionMatch validation (422)
	{name: "LIST resourceVersionMatch without resourceVersion", resource: "configmaps", path: cmPath, query: "resourceVersionMatch=NotOlderThan", wantCode: 422, wantReason: "Invalid", wantCause: "FieldValueForbidden"},
	{name: "LIST resourceVersionMatch with continue", resource: "configmaps", path: cmPath, query: "resourceVersion=1&resourceVersionMatch=NotOlderThan&continue=abc", wantCode: 422, wantReason: "Invalid", wantCause: "FieldValueForbidden"},
	{name: "LIST unknown resourceVersionMatch", resource: "configmaps", path: cmPath, query: "resourceVersion=1&resourceVersionMatch=Newest", wantCode: 422, wantReason: "Invalid", wantCause: "FieldValueNotSupported"},
	{name: "LIST resourceVersionMatch=Exact with resourceVersion=0", resource: "configmaps", path: cmPath, query: "resourceVersion=0&resourceVersionMatch=Exact", wantCode: 422, wantReason: "Invalid", wantCause: "FieldValueForbidden"},
	{name: "LIST sendInitialEvents without watch", resource: "configmaps", path: cmPath, query: "sendInitialEvents=true", wantCode: 422, wantReason: "Invalid", wantCause: "FieldValueForbidden"},

	// LIST: selectors
	{name: "configmaps LIST labelSelector", resource: "configmaps", path: cmPath, query: "labelSelector=app%3Da", wantCode: 200},
	{name: "configmaps LIST labelSelector set-based", resource: "configmaps", path: cmPath, query: "labelSelector=app+in+(a,b),tier!%3Dy", wantCode: 200},
	{name: "configmaps LIST invalid labelSelector", resource: "configmaps", path: cmPath, query: "labelSelector=app+in+(", wantCode: 400, wantReason: "BadRequest"},
	{name: "configmaps LIST fieldSelector metadata.name", resource: "configmaps", path: cmPath, query: "fieldSelector=metadata.name%3Dcm-b", wantCode: 200},
	{name: "configmaps LIST unsupported fieldSelector", resource: "configmaps", path: cmPath, query: "fieldSelector=data.x%3Dy", wantCode: 400, wantReason: "BadRequest"},
	{name: "pods LIST fieldSelector spec.nodeName", resource: "pods", path: podPath, query: "fieldSelector=spec.nodeName%3D{node}", wantCode: 200},
	{name: "pods LIST all namespaces fieldSelector spec.nodeName", resource: "pods", path: "/api/v1/pods", query: "fieldSelector=spec.nodeName%3D{node}", wantCode: 200},
	{name: "pods LIST fieldSelector spec.nodeName and status.phase", resource: "pods", path: podPath, query: "fieldSelector=spec.nodeName%3D{node},status.phase%3DPending", wantCode: 200},
	{name: "pods LIST fieldSelector spec.nodeName and labelSelector", resource: "pods", path: podPath, query: "fieldSelector=spec.nodeName%3D{node}&labelSelector=app%3Da", wantCode: 200},
	{name: "pods LIST deprecated fieldSelector spec.host", resource: "pods", path: podPath, query: "fieldSelector=spec.host%3D{node}", wantCode: 200},
	{name: "pods LIST unsupported fieldSelector", resource: "pods", path: podPath, query: "fieldSelector=spec.foo%3Dx", wantCode: 400, wantReason: "BadRequest"},
	{name: "pods LIST without spec.nodeName (wider than synced: the cloud answers)", resource: "pods", path: podPath, wantCode: 200},
	{name: "namespaces LIST labelSelector", resource: "namespaces", path: nsPath, query: "labelSelector=conformance%3Dyes", wantCode: 200},
	{name: "namespaces LIST fieldSelector metadata.name", resource: "namespaces", path: nsPath, query: "fieldSelector=metadata.name%3D{ns}", wantCode: 200},
	{name: "namespaces LIST fieldSelector status.phase", resource: "namespaces", path: nsPath, query: "fieldSelector=status.phase%3DActive,metadata.name%3D{ns}", wantCode: 200},
	{name: "namespaces LIST unsupported fieldSelector", resource: "namespaces", path: nsPath, query: "fieldSelector=spec.foo%3Dx", wantCode: 400, wantReason: "BadRequest"},
	{name: "nodes LIST fieldSelector metadata.name", resource: "nodes", path: nodPath, query: "fieldSelector=metadata.name%3D{node}", wantCode: 200},
	{name: "nodes LIST fieldSelector spec.unschedulable", resource: "nodes", path: nodPath, query: "fieldSelector=metadata.name%3D{node},spec.unschedulable%3Dfalse", wantCode: 200},

	// Content types and discovery
	{name: "configmaps GET Accept protobuf", resource: "configmaps", path: cmPath + "/cm-a", accept: acceptProtobuf, wantCode: 200},
	{name: "configmaps GET Accept protobuf only", resource: "configmaps", path: cmPath + "/cm-a", accept: "application/vnd.kubernetes.protobuf", wantCode: 200},
	{name: "configmaps GET not found Accept protobuf (Status in protobuf)", resource: "configmaps", path: cmPath + "/missing", accept: acceptProtobuf, wantCode: 404, wantReason: "NotFound"},
	{name: "configmaps LIST Accept protobuf", resource: "configmaps", path: cmPath, accept: acceptProtobuf, wantCode: 200},
	{name: "pods LIST Accept protobuf", resource: "pods", path: podPath, query: "fieldSelector=spec.nodeName%3D{node}", accept: acceptProtobuf, wantCode: 200},
	{name: "configmaps LIST Accept Table", resource: "configmaps", path: cmPath, accept: acceptTable, wantCode: 200},
	{name: "discovery /apis Accept aggregated v2 (cloud online)", path: "/apis", accept: acceptAggregated, wantCode: 200},
	{name: "configmaps GET Accept YAML", resource: "configmaps", path: cmPath + "/cm-a", accept: "application/yaml", wantCode: 200},
	{name: "configmaps LIST Accept YAML", resource: "configmaps", path: cmPath, accept: "application/yaml", wantCode: 200},
	{name: "configmaps GET not found Accept YAML (Status in YAML)", resource: "configmaps", path: cmPath + "/missing", accept: "application/yaml", wantCode: 404, wantReason: "NotFound"},
	{name: "configmaps WATCH Accept YAML: 406", resource: "configmaps", path: cmPath, query: "watch=1&resourceVersion={rv}", accept: "application/yaml", wantCode: 406, wantReason: "NotAcceptable"},
	{name: "configmaps GET Accept text/html: 406", resource: "configmaps", path: cmPath + "/cm-a", accept: "text/html", wantCode: 406, wantReason: "NotAcceptable"},
	{name: "configmaps GET Accept protobuf Table only: 406", resource: "configmaps", path: cmPath + "/cm-a", accept: "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", wantCode: 406, wantReason: "NotAcceptable"},
	{name: "configmaps GET Accept PartialObjectMetadata", resource: "configmaps", path: cmPath + "/cm-a", accept: acceptPartial, wantCode: 200},
	{name: "configmaps LIST Accept PartialObjectMetadataList", resource: "configmaps", path: cmPath, accept: acceptPartialList, wantCode: 200},
	{name: "configmaps LIST Accept PartialObjectMetadata: 406", resource: "configmaps", path: cmPath, accept: acceptPartial, wantCode: 406, wantReason: "NotAcceptable"},
	{name: "configmaps GET Accept Table includeObject=Bogus: 400", resource: "configmaps", path: cmPath + "/cm-a", query: "includeObject=Bogus", accept: acceptTable, wantCode: 400, wantReason: "BadRequest"},

	// WATCH
	{name: "configmaps WATCH from N: create, update, delete", kind: watchRow, resource: "configmaps", path: wcmPath, query: "watch=1&resourceVersion={rv}",
		wantCode: 200, changes: createUpdateDelete, wantEvents: []string{"ADDED", "MODIFIED", "DELETED"}},
	{name: "configmaps WATCH resourceVersion=0: current state, then changes", kind: watchRow, resource: "configmaps", path: wcmPath, query: "watch=1&resourceVersion=0",
		wantCode: 200, changes: createUpdateDelete, wantEvents: []string{"ADDED", "ADDED", "MODIFIED", "DELETED"}},
	{name: "configmaps WATCH resourceVersion unset: current state, then changes", kind: watchRow, resource: "configmaps", path: wcmPath, query: "watch=1",
		wantCode: 200, changes: createUpdateDelete, wantEvents: []string{"ADDED", "ADDED", "MODIFIED", "DELETED"}},
	{name: "configmaps WATCH from each side's list RV", kind: watchRow, resource: "configmaps", path: wcmPath, query: "watch=1", fromList: true,
		wantCode: 200, changes: createUpdateDelete, wantEvents: []string{"ADDED", "MODIFIED", "DELETED"}},
	{name: "configmaps WATCH labelSelector: stops and starts matching", kind: watchRow, resource: "configmaps", path: wcmPath, query: "watch=1&resourceVersion={rv}&labelSelector=w%3Dyes",
		wantCode: 200, changes: relabel, wantEvents: []string{"ADDED", "DELETED", "ADDED", "DELETED"}},
	{name: "configmaps WATCH resourceVersion=1 (before the edge's history)", kind: watchRow, resource: "configmaps", path: wcmPath, query: "watch=1&resourceVersion=1&timeoutSeconds=2",
		wantCode: 200, untilEnd: true, knownDifference: whyHistory, differsIn: aspectEvents},
	{name: "configmaps WATCH timeoutSeconds ends cleanly", kind: watchRow, resource: "configmaps", path: wcmPath, query: "watch=1&resourceVersion={rv}&timeoutSeconds=2",
		wantCode: 200, untilEnd: true},
	{name: "configmaps WATCH allowWatchBookmarks: bookmark shape", kind: watchRow, resource: "configmaps", path: wcmPath, query: "watch=1&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=4",
		wantCode: 200, untilEnd: true},
	{name: "configmaps WATCH Accept protobuf: create, update, delete", kind: watchRow, resource: "configmaps", path: wcmPath, query: "watch=1&resourceVersion={rv}",
		accept: acceptProtobuf, wantCode: 200, changes: createUpdateDelete, wantEvents: []string{"ADDED", "MODIFIED", "DELETED"}},
	{name: "configmaps WATCH Accept protobuf sendInitialEvents (WatchList)", kind: watchRow, resource: "configmaps", path: wcmPath,
		query:  "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=2",
		accept: acceptProtobuf, wantCode: 200, untilEnd: true},
	{name: "configmaps WATCH sendInitialEvents (WatchList)", kind: watchRow, resource: "configmaps", path: wcmPath,
		query:    "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=2",
		wantCode: 200, untilEnd: true},
	{name: "pods WATCH from an RV before the edge's initial list", kind: watchRow, resource: "pods", path: podPath, query: "watch=1&resourceVersion={rv}&fieldSelector=spec.nodeName%3D{node}&timeoutSeconds=2",
		wantCode: 200, untilEnd: true, knownDifference: whyHistory, differsIn: aspectEvents},
	{name: "namespaces WATCH resourceVersion=0 fieldSelector metadata.name", kind: watchRow, resource: "namespaces", path: nsPath, query: "watch=1&resourceVersion=0&fieldSelector=metadata.name%3D{ns}&timeoutSeconds=2",
		wantCode: 200, untilEnd: true, wantEvents: []string{"ADDED"}},
	{name: "nodes WATCH resourceVersion=0 fieldSelector metadata.name", kind: watchRow, resource: "nodes", path: nodPath, query: "watch=1&resourceVersion=0&fieldSelector=metadata.name%3D{node}&timeoutSeconds=2",
		wantCode: 200, untilEnd: true, wantEvents: []string{"ADDED"}},

	// kubectl
	{name: "kubectl get configmaps -o name", kind: kubectlRow, resource: "configmaps", kubectl: []string{"get", "configmaps", "-n", "{ns}", "-o", "name"}},
	{name: "kubectl get configmap -o json", kind: kubectlRow, resource: "configmaps", kubectl: []string{"get", "configmap", "cm-a", "-n", "{ns}", "-o", "json"}},
	{name: "kubectl get configmaps", kind: kubectlRow, resource: "configmaps", kubectl: []string{"get", "configmaps", "-n", "{ns}"}},
	{name: "kubectl get configmaps -o wide", kind: kubectlRow, resource: "configmaps", kubectl: []string{"get", "configmaps", "-n", "{ns}", "-o", "wide"}},
	{name: "kubectl get configmaps --show-labels", kind: kubectlRow, resource: "configmaps", kubectl: []string{"get", "configmaps", "-n", "{ns}", "--show-labels"}},
	{name: "kubectl get pods -o wide", kind: kubectlRow, resource: "pods", kubectl: []string{"get", "pods", "-n", "{ns}", "--field-selector", "spec.nodeName={node}", "-o", "wide"}},
	{name: "kubectl get namespace", kind: kubectlRow, resource: "namespaces", kubectl: []string{"get", "namespace", "{ns}"}},
	{name: "kubectl get node --show-labels", kind: kubectlRow, resource: "nodes", kubectl: []string{"get", "node", "{node}", "--show-labels"}},

	// client-go informers
	{name: "informer WatchListClient off", kind: informerRow, resource: "configmaps"},
	{name: "informer WatchListClient on, KUBE_WATCHLIST_INCONSISTENCY_DETECTOR=true", kind: informerRow, resource: "configmaps", watchList: true},
}

// Changes the watch rows make, in the row's own namespace.
var (
	createUpdateDelete = []change{
		{op: "create", name: "w", labels: map[string]string{"w": "yes"}},
		{op: "update", name: "w"},
		{op: "delete", name: "w"},
	}
	relabel = []change{
		{op: "create", name: "w", labels: map[string]string{"w": "yes"}},
		{op: "relabel", name: "w", labels: map[string]string{"w": "no"}},
		{op: "relabel", name: "w", labels: map[string]string{"w": "yes"}},
		{op: "delete", name: "w"},
	}
)

// method is the HTTP method of request and watch rows.
const method = http.MethodGet
