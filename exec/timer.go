package exec

import (
	"context"
	"time"
)

// ProcessingTimer is implemented by operators that act on the wall clock
// rather than on their input alone (processing-time windows): a window
// must fire when its end passes even if no record arrives. The graph runs
// one timer goroutine per such stage; it calls OnProcessingTime holding the
// stage's lock, as for a batch, so the operator needs no locking of its
// own, and its output goes downstream like any other.
type ProcessingTimer interface {
	// NextProcessingTime is the wall-clock time of the operator's next
	// timer; ok is false when none is pending. The graph asks again after
	// every batch the stage takes, since a batch can open a new window.
	NextProcessingTime() (at time.Time, ok bool)
	// OnProcessingTime fires what the operator's clock says is due.
	OnProcessingTime(ctx context.Context, out Emitter) error
}

// timerLoop runs a ProcessingTimer stage's timers until ctx ends or the
// stage finishes.
func (s *Stage) timerLoop(ctx context.Context, pt ProcessingTimer) error {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		s.mu.Lock()
		if s.done {
			s.mu.Unlock()
			return nil
		}
		at, ok := pt.NextProcessingTime()
		s.mu.Unlock()
		var due <-chan time.Time
		if ok {
			t.Reset(max(time.Until(at), 0))
			due = t.C
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.wake:
			t.Stop()
			continue
		case <-due:
		}
		if err := s.onTimer(ctx, pt); err != nil {
			return err
		}
	}
}

// onTimer hands a due timer to the operator under the stage's lock.
func (s *Stage) onTimer(ctx context.Context, pt ProcessingTimer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || ctx.Err() != nil {
		return nil
	}
	out := &stageEmitter{s: s}
	start := time.Now()
	err := pt.OnProcessingTime(ctx, out)
	s.Stats.Nanos.Add(int64(time.Since(start)) - out.downstream)
	return s.afterCall(ctx, err)
}

// nudge tells the stage's timer goroutine, if any, that the next timer may
// have changed. It never blocks: one pending nudge is enough.
func (s *Stage) nudge() {
	if s.wake == nil {
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Sleep waits for d or until ctx ends, whichever is first (then it
// returns ctx.Err()): how a source paces itself or polls.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
