package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestConfigFaultToleranceKeys(t *testing.T) {
	file := mustWriteFile(t, "node-name: n\nwatch-progress-timeout: 20s\nmax-concurrent-relists: 3\nmemory-limit: 900Mi\n")
	tests := []struct {
		name    string
		args    []string
		got     func(c config) string
		want    string
		wantErr string
	}{
		{name: "defaults", args: []string{"--node-name=n"},
			got: func(c config) string {
				l, _ := c.memoryLimit()
				return fmt.Sprint(c.WatchProgressTimeout, " ", c.MaxConcurrentRelists, " ", l)
			}, want: "15s 2 0"},
		{name: "file", args: []string{"--config", file},
			got: func(c config) string {
				l, _ := c.memoryLimit()
				return fmt.Sprint(c.WatchProgressTimeout, " ", c.MaxConcurrentRelists, " ", l)
			}, want: fmt.Sprint(20*time.Second, " 3 ", 900<<20)},
		{name: "bad memory limit", args: []string{"--node-name=n", "--memory-limit=lots"}, wantErr: "memory-limit"},
		{name: "negative memory limit", args: []string{"--node-name=n", "--memory-limit=-1Gi"}, wantErr: "memory-limit"},
		{name: "zero relists", args: []string{"--node-name=n", "--max-concurrent-relists=0"}, wantErr: "max-concurrent-relists"},
		{name: "zero progress timeout", args: []string{"--node-name=n", "--watch-progress-timeout=0s"}, wantErr: "watch-progress-timeout"},
		{name: "relist spread default", args: []string{"--node-name=n"},
			got: func(c config) string { return c.RelistSpread.String() }, want: "3s"},
		{name: "relist spread flag", args: []string{"--node-name=n", "--relist-spread=20s"},
			got: func(c config) string { return c.RelistSpread.String() }, want: "20s"},
		{name: "zero relist spread", args: []string{"--node-name=n", "--relist-spread=0s"}, wantErr: "relist-spread"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadConfig(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if got := tt.got(c); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
