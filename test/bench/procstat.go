//go:build e2e

package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ClockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat:
// 100 on every Linux architecture Go supports.
const ClockTicks = 100

// MiB is one mebibyte in bytes.
const MiB = 1 << 20

// Memory is a process's resident set now and at its peak, in bytes.
type Memory struct {
	// RSS is VmRSS and HWM VmHWM, the peak resident set.
	RSS, HWM int64
}

// ReadMemory reads VmRSS and VmHWM from /proc/<pid>/status.
func ReadMemory(pid int) (Memory, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, fmt.Errorf("read status of pid %d: %w", pid, err)
	}
	var m Memory
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			continue
		}
		switch fields[0] {
		case "VmRSS:":
			m.RSS = kb << 10
		case "VmHWM:":
			m.HWM = kb << 10
		}
	}
	if m.RSS == 0 || m.HWM == 0 {
		return m, fmt.Errorf("status of pid %d: no VmRSS or VmHWM", pid)
	}
	return m, nil
}

// ReadCPU returns the user plus system CPU time pid has used.
func ReadCPU(pid int) (time.Duration, error) {
	user, system, err := ReadCPUSplit(pid)
	return user + system, err
}

// ReadCPUSplit returns the user and the system (kernel) CPU time pid has
// used.
func ReadCPUSplit(pid int) (user, system time.Duration, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("read stat of pid %d: %w", pid, err)
	}
	// The command name may hold spaces; fields are counted after its ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("stat of pid %d: no command name", pid)
	}
	fields := strings.Fields(string(data[i+1:]))
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	const utime, stime = 14 - 3, 15 - 3
	if len(fields) <= stime {
		return 0, 0, fmt.Errorf("stat of pid %d: %d fields", pid, len(fields))
	}
	var ticks [2]int64
	for j, f := range []string{fields[utime], fields[stime]} {
		if ticks[j], err = strconv.ParseInt(f, 10, 64); err != nil {
			return 0, 0, fmt.Errorf("stat of pid %d: %w", pid, err)
		}
	}
	return time.Duration(ticks[0]) * time.Second / ClockTicks, time.Duration(ticks[1]) * time.Second / ClockTicks, nil
}

// ReadWriteCalls returns how many write system calls (write, writev,
// pwrite and the like) pid's threads have made: syscw in /proc/<pid>/io.
func ReadWriteCalls(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0, fmt.Errorf("read io of pid %d: %w", pid, err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "syscw:"); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("io of pid %d: no syscw", pid)
}
