// Package framework runs apiserver-lite end to end against a real cloud
// control plane: etcd and kube-apiserver on loopback ports with temporary
// state, Node,RBAC authorization (with NodeRestriction and no edge RBAC for
// a node-credential edge, else the cluster-scope RBAC in testdata),
// apiserver-lite as a separate process, kubectl, and kubemark as a hollow
// kubelet whose kubeconfig points at apiserver-lite.
//
// # Running
//
// The cloud binaries are built once from the wrapper modules in test/tools
// and cached per version (the first build takes several minutes):
//
//	export APISERVER_LITE_TOOLS_BIN="$(test/tools/build.sh)"
//
// APISERVER_LITE_BIN names the apiserver-lite binary under test. When it is
// unset, the tests build ./cmd/apiserver-lite once per test binary.
//
//	go build -o /tmp/apiserver-lite ./cmd/apiserver-lite
//	APISERVER_LITE_BIN=/tmp/apiserver-lite go test -tags e2e -count=1 -v ./test/e2e/...
//
// APISERVER_LITE_E2E_ARTIFACTS, when set, names a directory under which each
// test keeps its state and process logs after it ends; by default they live
// in t.TempDir and are removed. On failure the tail of every process log is
// written to the test log either way.
//
// # Lifecycle
//
// New starts the cloud (etcd, kube-apiserver), applies RBAC and prepares
// namespaces. StartEdge starts apiserver-lite, or restarts it on the same
// data dir and port after KillEdge. StopCloud and StartCloud stop and restart
// kube-apiserver on the same port and etcd data to simulate an outage.
// StartKubemark and RestartKubemark run a hollow kubelet through the edge.
// Every process runs in its own process group and is killed by PID when the
// test ends, also on failure.
//
// Only loopback addresses are used, except that kubemark's kubelet server
// binds all interfaces on a free port (the hollow kubelet has no flag for it).
package framework
