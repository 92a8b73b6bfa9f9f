package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync/atomic"

	"k8s.io/klog/v2"
)

// newLogger returns the daemon's one logger, writing format ("text" or
// "json") at level, and routes klog (client-go's logging) into it.
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	l, err := parseLevel(level)
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: l}
	var h slog.Handler
	switch format {
	case "", "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("log-format %q: want text or json", format)
	}
	logger := slog.New(h)
	routeKlog(h)
	return logger, nil
}

// klogSink is the handler klog writes through. klog's logger is a
// process-wide global that client-go's goroutines read at any time, so it
// is set once, before any client exists, and only the handler behind it
// changes: each daemon started routes klog into its own logger (tests
// start several in one process). Until then klog writes text to stderr.
var klogSink = &swapHandler{}

func init() {
	routeKlog(slog.NewTextHandler(os.Stderr, nil))
	klog.SetSlogLogger(slog.New(klogSink))
}

// routeKlog sends klog's records to h from now on.
func routeKlog(h slog.Handler) { klogSink.h.Store(&h) }

// swapHandler forwards to the handler stored last. Attributes and groups
// added through it bind to the handler current at that time.
type swapHandler struct{ h atomic.Pointer[slog.Handler] }

func (s *swapHandler) current() slog.Handler { return *s.h.Load() }

func (s *swapHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return s.current().Enabled(ctx, l)
}

func (s *swapHandler) Handle(ctx context.Context, r slog.Record) error {
	return s.current().Handle(ctx, r)
}

func (s *swapHandler) WithAttrs(attrs []slog.Attr) slog.Handler { return s.current().WithAttrs(attrs) }

func (s *swapHandler) WithGroup(name string) slog.Handler { return s.current().WithGroup(name) }

// parseLevel parses a log-level value.
func parseLevel(level string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return l, fmt.Errorf("log-level: %w", err)
	}
	return l, nil
}
