package main

import (
	"strings"
	"testing"
)

func TestPoolConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
		want    poolConfig
	}{
		{name: "no pool", want: poolConfig{PoolNamespace: defaultPoolNamespace,
			PoolServiceAccount: defaultPoolServiceAccount, PoolAudience: defaultPoolAudience}},
		{name: "pool", args: []string{"--pool", "site-a", "--pool-listen-address", "10.0.0.1:10552"},
			want: poolConfig{Pool: "site-a", PoolListenAddress: "10.0.0.1:10552", PoolNamespace: defaultPoolNamespace,
				PoolServiceAccount: defaultPoolServiceAccount, PoolAudience: defaultPoolAudience}},
		{name: "from the environment", env: map[string]string{"APISERVER_LITE_POOL": "site-b",
			"APISERVER_LITE_POOL_LISTEN_ADDRESS": "10.0.0.2:10552", "APISERVER_LITE_POOL_NAMESPACE": "edge"},
			want: poolConfig{Pool: "site-b", PoolListenAddress: "10.0.0.2:10552", PoolNamespace: "edge",
				PoolServiceAccount: defaultPoolServiceAccount, PoolAudience: defaultPoolAudience}},
		{name: "pool without door", args: []string{"--pool", "site-a"}, wantErr: "pool-listen-address must be IP:port"},
		{name: "door on a host name", args: []string{"--pool", "site-a", "--pool-listen-address", "edge-1:10552"},
			wantErr: "must name one IP"},
		{name: "door on every address", args: []string{"--pool", "site-a", "--pool-listen-address", "0.0.0.0:10552"},
			wantErr: "must name one IP"},
		{name: "pool not a label", args: []string{"--pool", "Site_A", "--pool-listen-address", "10.0.0.1:10552"},
			wantErr: "pool must be a DNS label"},
		{name: "bad namespace", args: []string{"--pool", "site-a", "--pool-listen-address", "10.0.0.1:10552",
			"--pool-namespace", "a/b"}, wantErr: "pool-namespace"},
		{name: "empty audience", args: []string{"--pool", "site-a", "--pool-listen-address", "10.0.0.1:10552",
			"--pool-audience", ""}, wantErr: "pool-audience"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c, err := loadConfig(append([]string{"--node-name", "n1"}, tc.args...))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error about %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want no error", err)
			}
			if c.poolConfig != tc.want {
				t.Errorf("got %+v, want %+v", c.poolConfig, tc.want)
			}
		})
	}
}
