// Package cpu reads where a fleet restart's CPU went on this one machine:
// kube-apiserver's cores sampled every SampleEvery (Sampler), and the
// machine's CPU by process at a few moments (Mark) turned into the cores
// each part used between them (Between) and written as the report's
// table (WriteShares).
//
// Every apiserver-lite's CPU is followed across their restart (Daemons):
// an old daemon's time is in /proc until it is reaped and in this
// process's reaped children's total after, so a daemon's CPU is counted
// once whichever side of its reaping it is read on.
package cpu
