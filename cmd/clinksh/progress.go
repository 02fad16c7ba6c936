package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/clink-sql/clink/exec"
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
	text := progressText(l.p.RowsRead.Load(), l.p.RowsTotal.Load(), l.p.BytesRead.Load(), l.p.BytesTotal.Load())
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

// progressText is e.g. "1,234 / 10,000 rows (12%), 1.2 MiB / 9.8 MiB read".
// Totals are zero when the scans do not know them.
func progressText(rows, rowsTotal, bytes, bytesTotal int64) string {
	s := groupDigits(rows)
	if rowsTotal > 0 {
		s += " / " + groupDigits(rowsTotal) + " rows"
		s += fmt.Sprintf(" (%d%%)", min(100, rows*100/rowsTotal))
	} else {
		s += " rows"
	}
	if bytes > 0 || bytesTotal > 0 { // sources that count rows only say nothing of bytes
		s += ", " + humanBytes(bytes)
		if bytesTotal > 0 {
			s += " / " + humanBytes(bytesTotal)
		}
	}
	return s + " read"
}

func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for i, c := range []byte(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, c)
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
