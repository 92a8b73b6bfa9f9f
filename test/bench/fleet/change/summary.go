//go:build e2e

package change

import (
	"fmt"
	"slices"
	"time"
)

// Summary is the change's creates, counted from the first SIGTERM.
type Summary struct {
	// Creates are the nodes' parts of the change, Requests each.
	Creates int
	// FirstCalled, LastSent, FirstAnswered and LastAnswered bound the
	// nodes' parts; the last answer is when the change was made.
	FirstCalled, LastSent, FirstAnswered, LastAnswered time.Duration
	// MedianLatency and MaxLatency are a node's part's last answer after
	// its first sending; Slowest the longest one request waited.
	MedianLatency, MaxLatency, Slowest time.Duration
	// Failed parts ended in an error; Retried took more requests than
	// Requests (client-go retried an answer); Unsent were never sent
	// (their daemon did not exit).
	Failed, Retried, Unsent int
	// LevelUIDs are the priority levels that handled them.
	LevelUIDs []string
	// FirstErr is the first failed create's error.
	FirstErr error
}

// Summarize reads the creates' timings against start.
func Summarize(start time.Time, ts []Timing) Summary {
	s := Summary{Creates: len(ts)}
	var lat []time.Duration
	called := 0
	for _, t := range ts {
		if t.Called.IsZero() {
			s.Unsent++
			continue
		}
		if called++; called == 1 || t.Called.Sub(start) < s.FirstCalled {
			s.FirstCalled = t.Called.Sub(start)
		}
		s.countOutcome(t)
		if t.attempts == 0 {
			continue
		}
		sent, ans := t.sent.Sub(start), t.answered.Sub(start)
		s.LastSent = max(s.LastSent, sent)
		if len(lat) == 0 || ans < s.FirstAnswered {
			s.FirstAnswered = ans
		}
		s.LastAnswered = max(s.LastAnswered, ans)
		lat = append(lat, ans-sent)
		s.Slowest = max(s.Slowest, t.slowest)
		if t.levelUID != "" && !slices.Contains(s.LevelUIDs, t.levelUID) {
			s.LevelUIDs = append(s.LevelUIDs, t.levelUID)
		}
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		s.MedianLatency, s.MaxLatency = lat[len(lat)/2], lat[len(lat)-1]
	}
	return s
}

// countOutcome counts a called part that failed or was retried.
func (s *Summary) countOutcome(t Timing) {
	if t.Err != nil {
		s.Failed++
		if s.FirstErr == nil {
			s.FirstErr = t.Err
		}
	}
	if t.attempts > Requests {
		s.Retried++
	}
}

// Check is what makes the change unsound: a create that failed or was
// never answered.
func (s Summary) Check() error {
	switch {
	case s.Creates == 0:
		return fmt.Errorf("figure missing: the change made no create")
	case s.Unsent > 0:
		return fmt.Errorf("figure missing: %d of the change's %d nodes' creates never sent", s.Unsent, s.Creates)
	case s.Failed > 0:
		return fmt.Errorf("%d of the change's %d creates failed, the first: %w", s.Failed, s.Creates, s.FirstErr)
	case s.LastAnswered <= 0:
		return fmt.Errorf("figure missing: the change's creates were never answered")
	}
	return nil
}
