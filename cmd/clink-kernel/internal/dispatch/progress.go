package dispatch

import (
	"fmt"
	"html"
	"sync"
	"time"

	"github.com/clink-sql/clink/cmd/clink-kernel/internal/wire"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/explain"
)

// Progress display timing: shown for a statement running longer than
// progressDelay (a fast cell shows nothing), redrawn at most every
// progressInterval. The shell's progress line waits as long.
const (
	progressDelay    = time.Second
	progressInterval = 500 * time.Millisecond
)

// progressDisplay is the notebook's progress line: a display (with a
// display_id) of the rows and bytes the scans have read of their total,
// updated in place while a statement runs, and cleared away when it ends
// (cellOutput.dropTransient) so the result that follows replaces it. An
// unbounded query never shows it: its live table is the progress.
type progressDisplay struct {
	out *cellOutput
	p   *exec.Progress

	mu      sync.Mutex
	id      string // the display's id once drawn
	stopped bool
	stop    chan struct{}
	done    chan struct{}
}

// startProgress starts the display's ticker; halt stops it.
func startProgress(out *cellOutput, p *exec.Progress, delay, interval time.Duration) *progressDisplay {
	d := &progressDisplay{out: out, p: p, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(d.done)
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-d.stop:
			return
		case <-t.C:
		}
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for {
			d.tick()
			select {
			case <-d.stop:
				return
			case <-tk.C:
			}
		}
	}()
	return d
}

// tick draws the current progress, the first time as a new display.
func (d *progressDisplay) tick() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return
	}
	rows, rowsTotal := d.p.RowsRead.Load(), d.p.RowsTotal.Load()
	text := explain.Progress(rows, rowsTotal, d.p.BytesRead.Load(), d.p.BytesTotal.Load())
	bar := ""
	if rowsTotal > 0 {
		bar = fmt.Sprintf(`<progress value="%d" max="100"></progress> `, explain.ProgressPercent(rows, rowsTotal))
	}
	data := map[string]any{
		"text/plain": text,
		"text/html":  `<div class="clink-progress">` + bar + "<small>" + html.EscapeString(text) + "</small></div>",
	}
	msgType := "update_display_data"
	if d.id == "" {
		d.id, msgType = wire.NewID(), "display_data"
		data = firstDrawing(data, "")
	}
	d.out.publish(msgType, map[string]any{"data": data, "metadata": map[string]any{},
		"transient": map[string]any{"display_id": d.id}})
}

// halt stops the ticker and clears the display away if it was drawn. It
// returns once no tick can publish any more, so what the caller sends next
// comes after the last progress message. Safe on nil and more than once.
func (d *progressDisplay) halt() {
	if d.handOver() != "" {
		d.out.dropTransient()
	}
}

// handOver stops the ticker and gives the display's id ("" when it was
// not drawn) to a stream's live table or chart, which draws itself into
// the same slot: one transient display per statement, cleared once. Safe
// on nil and more than once (only the first call gets the id).
func (d *progressDisplay) handOver() string {
	if d == nil {
		return ""
	}
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return ""
	}
	d.stopped = true // no tick publishes from here on
	close(d.stop)
	id := d.id
	d.mu.Unlock()
	<-d.done
	return id
}
