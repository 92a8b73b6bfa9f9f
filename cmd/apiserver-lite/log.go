package main

import (
	"fmt"
	"io"
	"log/slog"

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
	klog.SetSlogLogger(logger)
	return logger, nil
}

// parseLevel parses a log-level value.
func parseLevel(level string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return l, fmt.Errorf("log-level: %w", err)
	}
	return l, nil
}
