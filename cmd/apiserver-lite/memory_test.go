package main

import (
	"log/slog"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
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

// TestMemorySettingsKeepHeadroom: the daemon's settings raise the GC
// percent on this test's small heap above the configured 25, an off
// collector stays off, GOGC is left alone, and stop puts the configured
// percent back.
func TestMemorySettingsKeepHeadroom(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old) })
	log := slog.New(slog.DiscardHandler)
	tests := []struct {
		name    string
		args    []string
		gogc    string // GOGC in the environment; "" unset
		wantMin int    // the runtime's percent while running, at least
		wantMax int    // and at most
		after   int    // after stop
	}{
		{"default: raised for the headroom", []string{"--node-name=n"}, "", defaultGCPercent + 1, gcHeadroom * 100 / (4 << 20), defaultGCPercent},
		{"flag: raised too", []string{"--node-name=n", "--gc-percent=50"}, "", 51, gcHeadroom * 100 / (4 << 20), 50},
		{"off stays off", []string{"--node-name=n", "--gc-percent=-1"}, "", gcOff, gcOff, gcOff},
		{"GOGC left alone", []string{"--node-name=n"}, "70", 70, 70, 70},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.gogc != "" {
				t.Setenv("GOGC", tt.gogc)
				debug.SetGCPercent(70) // what the runtime read from GOGC at its start
			}
			c, err := loadConfig(tt.args)
			if err != nil {
				t.Fatalf("loadConfig: %v", err)
			}
			stop := applyMemorySettings(c, log)
			runtime.GC()
			if got := runtimeGCPercent(); got < tt.wantMin || got > tt.wantMax {
				t.Errorf("running: got percent %d, want %d to %d", got, tt.wantMin, tt.wantMax)
			}
			stop()
			if got := runtimeGCPercent(); got != tt.after {
				t.Errorf("after stop: got percent %d, want %d", got, tt.after)
			}
		})
	}
}

// runtimeGCPercent is the runtime's GC percent now; -1 when off.
func runtimeGCPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(int64(s[0].Value.Uint64()))
}
