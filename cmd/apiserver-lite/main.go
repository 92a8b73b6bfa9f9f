// Command apiserver-lite runs the edge-node API cache.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, cancel := signalContext()
	defer cancel()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "apiserver-lite:", err)
		os.Exit(1)
	}
}

// signalContext is cancelled by the first SIGTERM or interrupt; a second one
// exits at once, for an operator whose shutdown is stuck.
func signalContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-ch
		cancel()
		<-ch
		fmt.Fprintln(os.Stderr, "apiserver-lite: second signal, exiting now")
		os.Exit(1)
	}()
	return ctx, cancel
}
