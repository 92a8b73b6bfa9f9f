// Package apf reads kube-apiserver's API Priority and Fairness counters
// per priority level from its /metrics (summed over flow schemas, waits
// of executed requests only), the levels that moved between two reads
// (Levels.Minus), the names of the levels that handled a request, and
// writes the moved levels as the report's table.
package apf
