package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The cold-start data set: issue 12's mix of pods of about 9 KB of JSON
// (many env vars, managed fields) and configmaps of about 1 KB, plus a
// full event log of pod updates as a watch load leaves it.
const (
	coldPodShare     = 5 // of every 7 objects, 5 are pods and 2 configmaps
	coldObjectsShare = 7
	coldEnvVars      = 34 // per container
	coldContainers   = 2
	coldCMBytes      = 1024
	coldSeedBatch    = 100000 // objects per seeding transaction: one list
	coldUpdatedPods  = 200    // pods the logged updates cycle through
	coldPollEvery    = time.Millisecond
	coldStartTimeout = time.Minute
)

var coldPodsRes = cloudsync.Resource{GVR: holding.PodsGVR, FieldSelector: "spec.nodeName=n1"}
var coldCMsRes = cloudsync.Resource{GVR: holding.ConfigMapsGVR}

// coldPod returns pod i at rv, with its seq annotation set to seq.
func coldPod(i int, rv uint64, seq int) []byte {
	containers := make([]corev1.Container, coldContainers)
	fields := map[string]any{}
	for c := range containers {
		env := make([]corev1.EnvVar, coldEnvVars)
		envFields := map[string]any{".": map[string]any{}}
		for e := range env {
			env[e] = corev1.EnvVar{Name: "BENCH_ENV_" + strconv.Itoa(e), Value: fmt.Sprintf("%016x", uint64(i*1000+c*100+e)*0x9e3779b97f4a7c15)}
			envFields[`k:{"name":"`+env[e].Name+`"}`] = map[string]any{".": map[string]any{}, "f:name": map[string]any{}, "f:value": map[string]any{}}
		}
		containers[c] = corev1.Container{Name: "c" + strconv.Itoa(c), Image: "registry.k8s.io/pause:3.10", Env: env,
			ImagePullPolicy: corev1.PullIfNotPresent, TerminationMessagePath: "/dev/termination-log",
			TerminationMessagePolicy: corev1.TerminationMessageReadFile}
		fields[`k:{"name":"c`+strconv.Itoa(c)+`"}`] = map[string]any{".": map[string]any{}, "f:env": envFields,
			"f:image": map[string]any{}, "f:imagePullPolicy": map[string]any{}, "f:name": map[string]any{}}
	}
	fv1, _ := json.Marshal(map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{}}, "f:spec": map[string]any{"f:containers": fields}})
	ts := metav1.NewTime(time.Unix(1700000000, 0).UTC())
	grace := int64(30)
	pod := corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%06d", i), Namespace: "bench", UID: types.UID(fmt.Sprintf("uid-%032d", i)),
			ResourceVersion: strconv.FormatUint(rv, 10), CreationTimestamp: ts,
			Labels:      map[string]string{"app": "app-" + strconv.Itoa(i%50), "bench": "true"},
			Annotations: map[string]string{"bench/seq": strconv.Itoa(seq)},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "bench", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
				Time: &ts, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: fv1}}}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: containers, RestartPolicy: corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace, DNSPolicy: corev1.DNSClusterFirst, SchedulerName: "default-scheduler",
			SecurityContext: &corev1.PodSecurityContext{}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBestEffort},
	}
	raw, _ := json.Marshal(pod)
	return raw
}

// coldConfigMap returns configmap i at rv.
func coldConfigMap(i int, rv uint64) []byte {
	data := make([]byte, coldCMBytes/2)
	for j := range data {
		data[j] = byte(i*31 + j*7)
	}
	raw, _ := json.Marshal(corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%06d", i), Namespace: "bench", ResourceVersion: strconv.FormatUint(rv, 10),
			UID: types.UID(fmt.Sprintf("uid-cm-%029d", i))},
		Data: map[string]string{"data": fmt.Sprintf("%x", data)}})
	return raw
}

// seedColdStore writes n objects of the issue 12 mix and an event log of
// logSize pod updates into a new data dir, as a synced daemon leaves it.
func seedColdStore(tb testing.TB, dir string, n, logSize int) {
	tb.Helper()
	ctx := context.Background()
	st, err := metastore.Open(ctx, filepath.Join(dir, dbFile))
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	defer st.Close()
	pods := n * coldPodShare / coldObjectsShare
	mustPutInfo(tb, st, coldPodsRes, "pods", "Pod")
	mustPutInfo(tb, st, coldCMsRes, "configmaps", "ConfigMap")
	if err := st.PutMeta(ctx, holding.MetaKey, []byte(holding.ScopeCluster)); err != nil {
		tb.Fatal(err)
	}
	if err := st.PutMeta(ctx, cloudsync.VersionKey, []byte(seededVersion)); err != nil {
		tb.Fatal(err)
	}
	rv := uint64(1)
	seed := func(r cloudsync.Resource, count int, mk func(i int, rv uint64) []byte) {
		for start := 0; start < count; start += coldSeedBatch {
			var ops []metastore.Op
			for i := start; i < min(count, start+coldSeedBatch); i++ {
				rv++
				o := metastore.Object{Namespace: "bench", RV: rv, Raw: mk(i, rv)}
				var m metav1.PartialObjectMetadata
				_ = json.Unmarshal(o.Raw, &m)
				o.Name = m.Name
				ops = append(ops, metastore.Op{Object: o})
			}
			if err := st.Apply(ctx, r.Key(), ops, rv); err != nil {
				tb.Fatalf("seed: %v", err)
			}
		}
	}
	seed(coldPodsRes, pods, func(i int, rv uint64) []byte { return coldPod(i, rv, -1) })
	seed(coldCMsRes, n-pods, coldConfigMap)
	for seq := range logSize {
		rv++
		i := seq % min(coldUpdatedPods, max(pods, 1))
		op := metastore.Op{Object: metastore.Object{Namespace: "bench", Name: fmt.Sprintf("pod-%06d", i), RV: rv, Raw: coldPod(i, rv, seq)}}
		if err := st.Apply(ctx, coldPodsRes.Key(), []metastore.Op{op}, rv); err != nil {
			tb.Fatalf("seed update: %v", err)
		}
	}
}

func mustPutInfo(tb testing.TB, st *metastore.Store, r cloudsync.Resource, name, kind string) {
	tb.Helper()
	info, _ := json.Marshal(metav1.APIResource{Name: name, Namespaced: true, Kind: kind, Version: "v1", Verbs: metav1.Verbs{"get", "list", "watch"}})
	if err := st.PutMeta(context.Background(), r.InfoKey(), info); err != nil {
		tb.Fatalf("put info: %v", err)
	}
}

// coldStart runs the daemon offline on data and returns the time until a
// LIST of configmaps is first answered; the daemon is stopped after.
func coldStart(tb testing.TB, data, cfgFile, kc string) time.Duration {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- run(ctx, []string{"--config", cfgFile, "--kubeconfig", kc, "--data-dir", data, "--listen-address", "", "--insecure-listen-address", addr, "--sync-scope", "cluster",
			"--node-name", "n1", "--log-level", "error"})
	}()
	var took time.Duration
	for deadline := start.Add(coldStartTimeout); time.Now().Before(deadline); time.Sleep(coldPollEvery) {
		resp, err := http.Get("http://" + addr + "/api/v1/configmaps?limit=1")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				took = time.Since(start)
				break
			}
		}
	}
	cancel()
	if err := <-done; err != nil {
		tb.Fatalf("run: %v", err)
	}
	if took == 0 {
		tb.Fatalf("no LIST answered within %v", coldStartTimeout)
	}
	return took
}

// BenchmarkColdStart times an offline daemon's start on a stored data set
// until its first LIST is answered, as make bench's cold start does but
// inside one process (the process start itself is not counted).
// COLD_DATA_DIR keeps the seeded data dir for a run of the real binary.
func BenchmarkColdStart(b *testing.B) {
	for _, n := range []int{7000, 10000} {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			if keep := os.Getenv("COLD_DATA_DIR"); keep != "" {
				dir = filepath.Join(keep, strconv.Itoa(n))
			}
			data := filepath.Join(dir, "data")
			if _, err := os.Stat(filepath.Join(data, dbFile)); err != nil {
				seedColdStore(b, data, n, 1000)
			}
			kc := filepath.Join(dir, "kubeconfig")
			cfgFile := filepath.Join(dir, "config.yaml")
			if err := os.WriteFile(kc, []byte(unreachableKubeconfig), 0o600); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(cfgFile, []byte("{}\n"), 0o600); err != nil {
				b.Fatal(err)
			}
			var total time.Duration
			for b.Loop() {
				total += coldStart(b, data, cfgFile, kc)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/start")
		})
	}
}
