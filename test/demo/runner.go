//go:build e2e

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
)

// runner is the testing.TB the e2e framework is written against, for a
// program instead of a test: a fatal failure prints the message, runs every
// cleanup (which kills every process the framework started) and exits.
type runner struct {
	// TB is nil. It only provides testing.TB's unexported method; every
	// method the framework calls is defined below.
	testing.TB

	ctx context.Context
	out io.Writer

	mu sync.Mutex
	// cleanups run last-registered first, at most once. Guarded by mu.
	cleanups []func()
	// failed is set by Error, Errorf and Fatal*. Guarded by mu.
	failed bool
	// tempDir is created on first use and removed by the last cleanup.
	// Guarded by mu.
	tempDir string

	// onExit, set before use, picks the exit status after the cleanups
	// ran; nil means 1 after a failure, else 0.
	onExit func(failed bool) int
}

// newRunner returns a runner whose Context is ctx and which logs to out.
func newRunner(ctx context.Context, out io.Writer) *runner {
	return &runner{ctx: ctx, out: out}
}

func (r *runner) Name() string             { return "demo" }
func (r *runner) Context() context.Context { return r.ctx }
func (r *runner) Helper()                  {}
func (r *runner) Output() io.Writer        { return r.out }
func (r *runner) Attr(key, value string)   { r.Logf("%s=%s", key, value) }

func (r *runner) Log(args ...any)                 { fmt.Fprintln(r.out, args...) }
func (r *runner) Logf(format string, args ...any) { fmt.Fprintf(r.out, format+"\n", args...) }

func (r *runner) Error(args ...any) {
	r.report(fmt.Sprint(args...))
}

func (r *runner) Errorf(format string, args ...any) {
	r.report(fmt.Sprintf(format, args...))
}

// report prints an error and marks the run failed, unless the run was
// interrupted: then errors are the interruption itself and only noted.
func (r *runner) report(msg string) {
	if r.ctx.Err() != nil {
		fmt.Fprintf(r.out, "stopping: %s\n", firstLine(msg))
		return
	}
	r.Fail()
	fmt.Fprintf(r.out, "error: %s\n", msg)
}

func (r *runner) Fatal(args ...any) {
	r.Error(args...)
	r.FailNow()
}

func (r *runner) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.FailNow()
}

// Skip and friends have no meaning in a program; they fail like Fatal.
func (r *runner) Skip(args ...any)                 { r.Fatal(args...) }
func (r *runner) Skipf(format string, args ...any) { r.Fatalf(format, args...) }
func (r *runner) SkipNow()                         { r.FailNow() }
func (r *runner) Skipped() bool                    { return false }

func (r *runner) Fail() {
	if r.ctx.Err() != nil {
		return // an interruption is not a failure
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
}

func (r *runner) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

// FailNow ends the program after the cleanups.
func (r *runner) FailNow() {
	r.Fail()
	r.exit()
}

// exit runs the cleanups and ends the program with onExit's status.
func (r *runner) exit() {
	r.runCleanups()
	failed := r.Failed()
	code := 0
	if failed {
		code = 1
	}
	if r.onExit != nil {
		code = r.onExit(failed)
	}
	os.Exit(code)
}

func (r *runner) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

func (r *runner) Setenv(key, value string) {
	if err := os.Setenv(key, value); err != nil {
		r.Fatalf("setenv %s: %v", key, err)
	}
}

func (r *runner) Chdir(dir string) {
	if err := os.Chdir(dir); err != nil {
		r.Fatalf("chdir %s: %v", dir, err)
	}
}

// TempDir returns one directory for the whole run, removed at cleanup.
func (r *runner) TempDir() string {
	r.mu.Lock()
	dir := r.tempDir
	r.mu.Unlock()
	if dir != "" {
		return dir
	}
	dir, err := os.MkdirTemp("", "apiserver-lite-demo-")
	if err != nil {
		r.Fatalf("create temp dir: %v", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tempDir = dir
	// Run last, after the teardown of the processes that use it.
	r.cleanups = append([]func(){func() { _ = os.RemoveAll(dir) }}, r.cleanups...)
	return dir
}

func (r *runner) ArtifactDir() string { return r.TempDir() }

// runCleanups runs the registered cleanups, newest first. A cleanup that
// registers another runs it too; a second call finds none left.
func (r *runner) runCleanups() {
	for {
		r.mu.Lock()
		n := len(r.cleanups)
		if n == 0 {
			r.mu.Unlock()
			return
		}
		f := r.cleanups[n-1]
		r.cleanups = r.cleanups[:n-1]
		r.mu.Unlock()
		f()
	}
}

// firstLine returns s up to its first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
