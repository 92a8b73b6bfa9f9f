//go:build e2e

package cpu

import (
	"bytes"
	"fmt"
	"time"
)

// WriteShares writes the cores each part of the machine used between a
// fleet-wide daemon restart's three marks: its first SIGTERM, the change
// made, every node serving it.
func WriteShares(b *bytes.Buffer, marks []Mark) {
	if len(marks) != 3 {
		fmt.Fprintf(b, "CPU by process: not read (%d marks).\n\n", len(marks))
		return
	}
	cols := []Shares{Between(marks[0], marks[1]), Between(marks[1], marks[2]), Between(marks[0], marks[2])}
	ms := time.Millisecond
	fmt.Fprintf(b, "| cores used (CPU-seconds a second) | first SIGTERM → change made (%s) | change made → every node serving it (%s) | whole window (%s) |\n| --- | --- | --- | --- |\n",
		cols[0].Elapsed.Round(ms), cols[1].Elapsed.Round(ms), cols[2].Elapsed.Round(ms))
	for _, row := range []struct {
		name string
		get  func(Shares) float64
	}{
		{"every apiserver-lite, old and new, summed", func(s Shares) float64 { return s.Daemons }},
		{"kube-apiserver", func(s Shares) float64 { return s.API }},
		{"etcd", func(s Shares) float64 { return s.Etcd }},
		{"this benchmark (its clients, the change's creates, the audit log's reading)", func(s Shares) float64 { return s.Bench }},
		{"everything else on the machine", func(s Shares) float64 { return s.Others }},
		{"**whole machine busy**", func(s Shares) float64 { return s.Busy }},
		{"whole machine's capacity", func(s Shares) float64 { return s.Cores }},
	} {
		fmt.Fprintf(b, "| %s | %.2f | %.2f | %.2f |\n", row.name, row.get(cols[0]), row.get(cols[1]), row.get(cols[2]))
	}
	b.WriteString("\n")
}
