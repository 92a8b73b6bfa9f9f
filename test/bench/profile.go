//go:build e2e

package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// pprofIndex is where a Go server registers net/http/pprof.
const pprofIndex = "/debug/pprof/"

// profileNote says whether apiserver-lite serves pprof; the profiles are
// taken when it does.
func profileNote(ctx context.Context, lite *server, cfg Config) (note string, serves bool) {
	if cfg.ProfileDir == "" {
		return "profiles not requested", false
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, lite.base+pprofIndex, nil)
	if err != nil {
		return err.Error(), false
	}
	resp, err := lite.http.Do(req)
	if err != nil {
		return fmt.Sprintf("GET %s: %v", pprofIndex, err), false
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("apiserver-lite does not serve %s (%s), so no CPU or heap profile was taken", pprofIndex, resp.Status), false
	}
	return "", true
}

// startCPUProfile takes a CPU profile of s for the watch benchmark's
// duration; stop waits for it.
func startCPUProfile(ctx context.Context, s *server, cfg Config, p *profiler) (stop func() error) {
	secs := strconv.Itoa(max(1, int(cfg.WatchFor.Seconds())))
	const name = "watch-cpu.pprof"
	done := make(chan error, 1)
	go func() {
		done <- saveProfile(ctx, s, "profile?seconds="+secs, p.path(name))
	}()
	return func() error {
		if err := <-done; err != nil {
			return err
		}
		p.saved(name, fmt.Sprintf("apiserver-lite's CPU for %ss of the last round's watch run", secs))
		return nil
	}
}

func saveProfile(ctx context.Context, s *server, name, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+pprofIndex+name, nil)
	if err != nil {
		return err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return fmt.Errorf("profile %s: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile %s: %s", name, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("profile %s: %w", name, err)
	}
	return f.Close()
}

// Machine describes where the figures were taken.
type Machine struct {
	// CPUs is runtime.NumCPU.
	CPUs int
	// Model is /proc/cpuinfo's model name, or "unknown".
	Model string
	// Memory is /proc/meminfo's MemTotal, in bytes.
	Memory int64
	// Date is when the run started, in UTC.
	Date time.Time
	// LoadStart and LoadEnd are /proc/loadavg's 1, 5 and 15 minute loads
	// at the run's start and end.
	LoadStart, LoadEnd string
}

// ReadMachine describes this machine now; LoadEnd is left for the caller
// to set when the run ends.
func ReadMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), Model: "unknown", Date: time.Now().UTC(), LoadStart: LoadAverage()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.Model = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				m.Memory = kb << 10
			}
		}
	}
	return m
}

// LoadAverage is /proc/loadavg's 1, 5 and 15 minute loads, or "unknown".
func LoadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if f := strings.Fields(string(data)); len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
