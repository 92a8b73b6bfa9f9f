package holding

import (
	"context"
	"log/slog"
	"testing"
)

// The sync loops wait for the scope's confirmation; a contradicted scope
// keeps them from starting and ends the gate's run with the error.
func TestScopeGate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		check    Check
		wantSync bool
		wantErr  bool
	}{
		{"nothing to confirm", nil, true, false},
		{"confirmed", func(context.Context, func()) error { return nil }, true, false},
		{"contradicted", func(context.Context, func()) error { return ErrWrongNode }, false, true},
		{"unanswered", func(ctx context.Context, unconfirmed func()) error {
			unconfirmed()
			<-ctx.Done()
			return ctx.Err()
		}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			g := NewGate(tc.check, slog.New(slog.DiscardHandler))
			synced := make(chan struct{})
			held := g.Hold(func(context.Context) error { close(synced); return nil })
			gateDone := make(chan error, 1)
			go func() { gateDone <- g.Run(ctx) }()
			heldDone := make(chan error, 1)
			go func() { heldDone <- held(ctx) }()
			select {
			case <-synced:
				if !tc.wantSync {
					t.Fatalf("sync loop: got started, want held")
				}
			case err := <-gateDone:
				if !tc.wantErr || err == nil {
					t.Fatalf("gate: got %v before the loop started, want it running", err)
				}
			}
			cancel()
			<-heldDone
			if tc.wantErr {
				select {
				case <-synced:
					t.Errorf("sync loop: got started after a contradicted scope, want held")
				default:
				}
				return
			}
			if err := <-gateDone; err != nil {
				t.Errorf("gate after shutdown: got %v, want nil", err)
			}
		})
	}
}
