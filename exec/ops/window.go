package ops

import (
	"fmt"
	"time"
)

// WindowKind is the shape of an event-time window.
type WindowKind int

const (
	// Tumble: fixed windows of Size, aligned to Offset.
	Tumble WindowKind = iota
	// Hop: windows of Size starting every Slide (they overlap when Slide < Size).
	Hop
	// Session: per key, events closer than Gap belong to one window.
	Session
)

func (k WindowKind) String() string {
	switch k {
	case Tumble:
		return "TUMBLE"
	case Hop:
		return "HOP"
	default:
		return "SESSION"
	}
}

// WindowSpec is a window function's arguments.
type WindowSpec struct {
	Kind   WindowKind
	Size   time.Duration // TUMBLE, HOP
	Slide  time.Duration // HOP
	Offset time.Duration // TUMBLE, HOP: alignment
	Gap    time.Duration // SESSION
	// ProcTime: the windows are over processing time (a PROCTIME()
	// attribute): a row belongs to the window of the wall clock when the
	// window operator takes it, and windows fire on a wall-clock timer.
	ProcTime bool
}

// String renders the spec in SQL terms, for EXPLAIN.
func (s WindowSpec) String() string {
	if s.ProcTime {
		t := s
		t.ProcTime = false
		in := t.String()
		return in[:len(in)-1] + ", processing time)"
	}
	switch s.Kind {
	case Tumble:
		if s.Offset != 0 {
			return fmt.Sprintf("TUMBLE(size %s, offset %s)", s.Size, s.Offset)
		}
		return fmt.Sprintf("TUMBLE(size %s)", s.Size)
	case Hop:
		return fmt.Sprintf("HOP(slide %s, size %s)", s.Slide, s.Size)
	default:
		return fmt.Sprintf("SESSION(gap %s)", s.Gap)
	}
}

// Validate checks the spec.
func (s WindowSpec) Validate() error {
	switch s.Kind {
	case Tumble:
		if s.Size <= 0 {
			return fmt.Errorf("TUMBLE size must be positive, not %s", s.Size)
		}
	case Hop:
		if s.Size <= 0 || s.Slide <= 0 {
			return fmt.Errorf("HOP slide and size must be positive (slide %s, size %s)", s.Slide, s.Size)
		}
		if s.Size/s.Slide > 1000 {
			return fmt.Errorf("HOP size %s / slide %s puts each row in more than 1000 windows", s.Size, s.Slide)
		}
	case Session:
		if s.Gap <= 0 {
			return fmt.Errorf("SESSION gap must be positive, not %s", s.Gap)
		}
		if s.ProcTime {
			return fmt.Errorf("SESSION windows over processing time are not supported (TUMBLE and HOP are)")
		}
	default:
		return fmt.Errorf("unknown window kind %d", s.Kind)
	}
	return nil
}

// floorDiv is a / b rounded toward minus infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// lastStart is the start (µs) of the latest TUMBLE/HOP window holding ts.
func (s WindowSpec) lastStart(ts int64) int64 {
	step, off := s.Size.Microseconds(), s.Offset.Microseconds()
	if s.Kind == Hop {
		step = s.Slide.Microseconds()
	}
	return floorDiv(ts-off, step)*step + off
}

// windowsOf calls fn(start) for every TUMBLE/HOP window holding ts (µs),
// latest first.
func (s WindowSpec) windowsOf(ts int64, fn func(start int64)) {
	start := s.lastStart(ts)
	if s.Kind == Tumble {
		fn(start)
		return
	}
	size, slide := s.Size.Microseconds(), s.Slide.Microseconds()
	for ; start > ts-size; start -= slide {
		fn(start)
	}
}
