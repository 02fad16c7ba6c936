package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/explain"
)

// progressLine draws "rows and bytes read of the total" on the terminal
// (stderr) while a bounded query runs: first after delay, then at most every
// interval, each time over the previous one with \r. It is erased before
// the result prints, and never drawn for an unbounded query, whose output
// is the progress.
type progressLine struct {
	w io.Writer
	p *exec.Progress

	mu        sync.Mutex
	drawn     bool
	stopped   bool
	unbounded bool
	stop      chan struct{}
}

// startProgress starts the ticker goroutine; halt stops it.
func startProgress(w io.Writer, p *exec.Progress, delay, interval time.Duration) *progressLine {
	l := &progressLine{w: w, p: p, stop: make(chan struct{})}
	go func() {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for {
			l.tick()
			select {
			case <-l.stop:
				return
			case <-tk.C:
			}
		}
	}()
	return l
}

// tick draws the current state unless the line was halted or the result
// is unbounded.
func (l *progressLine) tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped || l.unbounded {
		return
	}
	text := explain.Progress(l.p.RowsRead.Load(), l.p.RowsTotal.Load(), l.p.BytesRead.Load(), l.p.BytesTotal.Load())
	fmt.Fprintf(l.w, "\r%s\x1b[K", text)
	l.drawn = true
}

// setUnbounded turns the line off (and erases it) for an unbounded result.
func (l *progressLine) setUnbounded() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unbounded = true
	l.eraseLocked()
}

// halt stops the line for good and erases it. Safe to call more than once
// and on a nil line.
func (l *progressLine) halt() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	l.stopped = true
	close(l.stop)
	l.eraseLocked()
}

func (l *progressLine) eraseLocked() {
	if l.drawn {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.drawn = false
	}
}
