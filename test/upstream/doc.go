// Package upstream runs Kubernetes' own api-machinery e2e specs (e2e.test,
// built from k8s.io/kubernetes test/e2e by test/tools/build.sh
// --upstream-e2e) against a real etcd and kube-apiserver, with every request
// of the suite going through apiserver-lite. `make upstream-e2e` runs it.
package upstream
