package main

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/clink-sql/clink/exec"
)

// syncBuffer is a bytes.Buffer safe for the progress goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestProgressLineDrawsAndErases(t *testing.T) {
	var w syncBuffer
	p := &exec.Progress{}
	p.RowsRead.Store(50)
	p.RowsTotal.Store(100)
	// A delay long enough that the goroutine never draws: the test drives
	// tick itself.
	l := startProgress(&w, p, time.Hour, time.Hour)
	l.tick()
	if got, want := w.String(), "\r50 / 100 rows (50%) read\x1b[K"; got != want {
		t.Fatalf("drawn %q, want %q", got, want)
	}
	l.halt()
	if got := w.String(); got[len(got)-4:] != "\r\x1b[K" {
		t.Errorf("not erased: %q", got)
	}
	n := len(w.String())
	l.tick()
	l.halt()
	if len(w.String()) != n {
		t.Errorf("drew after halt: %q", w.String())
	}
}

func TestProgressLineNotForUnbounded(t *testing.T) {
	var w syncBuffer
	l := startProgress(&w, &exec.Progress{}, time.Hour, time.Hour)
	defer l.halt()
	l.setUnbounded()
	l.tick()
	if w.String() != "" {
		t.Errorf("drew for an unbounded result: %q", w.String())
	}
}

// The shell erases the line before results print: the sink opens its
// output gate, which halts the line.
func TestProgressErasedBeforeResult(t *testing.T) {
	ts := newTestShell(t, formatCSV)
	var errw syncBuffer
	ts.errw = &errw
	var pl *progressLine
	opts := sinkOptions{out: ts.out, mem: ts.mem}
	pl = startProgress(&errw, &exec.Progress{}, time.Hour, time.Hour)
	opts.beforeOutput = pl.halt
	pl.tick()
	s := newSink(formatCSV, opts)
	if err := s.Columns(allTypesSchema(), true); err != nil {
		t.Fatal(err)
	}
	if got := errw.String(); got != "\r0 rows read\x1b[K\r\x1b[K" {
		t.Errorf("stderr %q: the line must be erased before the header", got)
	}
}
