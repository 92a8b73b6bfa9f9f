// Package caller carries, in a request's context, who a door says is
// asking and how the cloud may be asked on its behalf. The doors (package
// door) set it after authentication; the local API and its proxy read it.
// It is a leaf: it imports nothing of the project but the response writer,
// so the API never imports the doors.
//
// Invariant: a request no door marked has no caller and is never sent to
// the cloud with the daemon's credentials (ForwardTransport fails closed).
package caller
