// Package atrest decides how the daemon's state is kept at rest: what the
// store seals with the state key (Secrets, stored TokenRequest answers,
// reviewed tokens), the key file kept apart from the data dir, the
// TokenRequest answers kept on disk only when sealed and in memory
// otherwise, and the hourly removal and scrubbing of stored credentials
// past use, and the re-encryption of a stopped daemon's store with a new
// key (rekey.go). cmd reads the key file's path from its flags and wires the
// rest.
package atrest
