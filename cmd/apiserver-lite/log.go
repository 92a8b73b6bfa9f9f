package main

import (
	"fmt"
	"io"
	"log/slog"

	"k8s.io/klog/v2"
)

// newLogger returns the daemon's one logger and routes klog (client-go's
// logging) into it.
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
	klog.SetSlogLogger(logger)
	return logger, nil
}
