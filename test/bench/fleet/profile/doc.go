// Package profile takes kube-apiserver's CPU profiles over a fleet
// run's windows and reads them: each profile is asked of
// /debug/pprof/profile in chunks (Take, Until), since a request of more
// than a minute is cut off, and saved to a file; a side's or a restart's
// files are merged and summarised by `go tool pprof -top` (Top, CumTop);
// the costs the fleet is suspected of adding are read from the same
// merge by their functions' cumulative time (ReadSuspects) and written as
// the report's table (WriteSuspects).
package profile
