package main

import (
	"strings"
	"testing"
)

func TestGCPercent(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		envSet  bool
		want    int
		wantSet bool
		wantErr string
	}{
		{name: "default", args: []string{"--node-name=n"}, want: defaultGCPercent, wantSet: true},
		{name: "GOGC set", args: []string{"--node-name=n"}, envSet: true, wantSet: false},
		{name: "flag beats GOGC", args: []string{"--node-name=n", "--gc-percent=60"}, envSet: true, want: 60, wantSet: true},
		{name: "off", args: []string{"--node-name=n", "--gc-percent=-1"}, want: gcOff, wantSet: true},
		{name: "below off", args: []string{"--node-name=n", "--gc-percent=-2"}, wantErr: "gc-percent"},
		{name: "not a number", args: []string{"--node-name=n", "--gc-percent=low"}, wantErr: "gc-percent"},
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
				t.Fatalf("loadConfig: %v", err)
			}
			got, set := c.gcPercent(tt.envSet)
			if got != tt.want || set != tt.wantSet {
				t.Errorf("got %d, %v; want %d, %v", got, set, tt.want, tt.wantSet)
			}
		})
	}
}
