// Package frames counts the HTTP/2 frames of a process's client
// connections to the cloud from the log golang.org/x/net/http2 writes
// under GODEBUG=http2debug=2, by direction and type, over a window, and
// writes them as the frame report's table, frames a minute per side.
//
// Only client connections opened at or after a side's start count: a
// connection is known by its framer's address and its client preface
// (the SETTINGS with ENABLE_PUSH=0 a server never sends), so a reused
// address starts a new connection.
package frames
