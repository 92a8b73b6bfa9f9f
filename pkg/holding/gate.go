package holding

import (
	"context"
	"log/slog"
	"sync"
)

// Gate holds the loops that sync from the cloud until the cloud has
// confirmed the sync scope startup took without it, or has not answered
// within StartupPatience, so the local API serves the stored state at once
// while nothing is synced under credentials the cloud contradicts.
type Gate struct {
	check Check // nil: nothing to confirm
	log   *slog.Logger
	// open is closed once the loops may sync. Immutable.
	open     chan struct{}
	openOnce sync.Once
}

// NewGate returns a gate that opens once check confirms the scope; nil
// opens it at once.
func NewGate(check Check, log *slog.Logger) *Gate {
	g := &Gate{check: check, log: log, open: make(chan struct{})}
	if check == nil {
		g.openGate()
	}
	return g
}

func (g *Gate) openGate() { g.openOnce.Do(func() { close(g.open) }) }

// Run confirms the scope and opens the gate, then waits for ctx. A cloud
// that contradicts the scope keeps the gate shut (or, if it answered only
// after StartupPatience, leaves it open) and ends run with the error,
// which fails /livez: a restart applies the stored answer, or stops on
// another node's credentials.
func (g *Gate) Run(ctx context.Context) error {
	if g.check != nil {
		err := g.check(ctx, g.openGate)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			g.log.Error("the cloud contradicts the sync scope", "err", err)
			return err
		}
		g.openGate()
	}
	<-ctx.Done()
	return nil
}

// Hold returns run, started only once the gate is open.
func (g *Gate) Hold(run func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			return nil
		case <-g.open:
			return run(ctx)
		}
	}
}
