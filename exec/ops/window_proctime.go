package ops

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// ProcTimeWindowAggregate is GROUP BY keys over TUMBLE or HOP windows of
// processing time (Flink's windows over a PROCTIME() attribute). As in
// Flink, a row belongs to the windows of the operator's clock when it
// takes the row, not of the value its time column carries (that value was
// read upstream, a little earlier); a window fires when the clock reaches
// its last millisecond, on a timer (exec.ProcessingTimer), whether or not
// records arrive. No record is ever late. Event-time watermarks pass
// through untouched: the output's window columns are not event time.
//
// When the input ends, the windows still open fire at once: their rows
// are complete, and a bounded run (a benchmark) then has its result
// without waiting for the wall clock.
//
// The panes are WindowAggregate's (one HashAggregate per window), so the
// columnar fold and the fire's born-columnar output are the event-time
// operator's; a whole batch falls into one TUMBLE window (size/slide for
// HOP), so it is folded without looking at its time column.
type ProcTimeWindowAggregate struct {
	w   *WindowAggregate
	now func() time.Time
}

// NewProcTimeWindowAggregate returns a windowed GROUP BY groupCols over
// processing-time windows of spec (TUMBLE or HOP); the input and output
// layouts are WindowAggregate's (timeCol is the PROCTIME column, checked
// to be a TIMESTAMP but not read).
func NewProcTimeWindowAggregate(spec WindowSpec, timeCol int, groupCols []int, aggs []AggSpec, out *arrow.Schema, mem memory.Allocator) *ProcTimeWindowAggregate {
	spec.ProcTime = true
	w := NewWindowAggregate(spec, timeCol, groupCols, aggs, out, mem)
	return &ProcTimeWindowAggregate{w: w, now: time.Now}
}

// SetClock replaces the wall clock (tests).
func (p *ProcTimeWindowAggregate) SetClock(now func() time.Time) { p.now = now }

// Kind implements exec.Operator.
func (p *ProcTimeWindowAggregate) Kind() string { return "proctime_window_aggregate" }

// Capabilities implements exec.Operator.
func (p *ProcTimeWindowAggregate) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, EmitsColumnar: true}
}

// SetColumnarOutput implements exec.ColumnarOutputSetter.
func (p *ProcTimeWindowAggregate) SetColumnarOutput(on bool) { p.w.SetColumnarOutput(on) }

// Spec is the window, for EXPLAIN.
func (p *ProcTimeWindowAggregate) Spec() WindowSpec { return p.w.spec }

// OpenWindows is the number of windows holding state.
func (p *ProcTimeWindowAggregate) OpenWindows() int { return len(p.w.panes) }

// Report implements exec.Reporter.
func (p *ProcTimeWindowAggregate) Report() exec.OperatorReport { return p.w.Report() }

// clock is the operator's time in µs, never inside a window that has
// fired: windows fire once the clock reaches their end (see
// OnProcessingTime), and a wall clock stepped back puts rows in the open
// window, not in a fired one.
func (p *ProcTimeWindowAggregate) clock() int64 {
	return max(p.now().UnixMicro(), p.w.wm+1000)
}

func (p *ProcTimeWindowAggregate) check(in *arrow.Schema) error {
	if _, _, err := p.w.timeScale(in); err != nil {
		return err
	}
	if p.w.spec.Kind == Session {
		return fmt.Errorf("window aggregate: %s", p.w.spec.Validate())
	}
	return nil
}

// ProcessColumnar folds the whole batch into the window(s) of now.
func (p *ProcTimeWindowAggregate) ProcessColumnar(ctx context.Context, _ int, b *exec.Batch, _ exec.Emitter) (bool, error) {
	if err := p.check(b.Schema()); err != nil {
		return false, err
	}
	var err error
	p.w.spec.windowsOf(p.clock(), func(start int64) {
		if err != nil {
			return
		}
		agg := p.w.paneAt(start).agg
		var handled bool
		if handled, err = agg.ProcessColumnar(ctx, 0, b, nil); err == nil && !handled {
			err = agg.Process(ctx, 0, b, nil)
		}
	})
	if err != nil {
		// State may be partly updated: the query fails, no replay.
		return true, fmt.Errorf("window aggregate %s: %w", p.w.spec, err)
	}
	return true, nil
}

// Process is the row path: the same fold over the batch's rows.
func (p *ProcTimeWindowAggregate) Process(ctx context.Context, _ int, b *exec.Batch, _ exec.Emitter) error {
	if err := p.check(b.Schema()); err != nil {
		return err
	}
	var err error
	p.w.spec.windowsOf(p.clock(), func(start int64) {
		if err == nil {
			err = p.w.paneAt(start).agg.Process(ctx, 0, b, nil)
		}
	})
	if err != nil {
		return fmt.Errorf("window aggregate %s: %w", p.w.spec, err)
	}
	return nil
}

// NextProcessingTime implements exec.ProcessingTimer: the end of the
// earliest open window.
func (p *ProcTimeWindowAggregate) NextProcessingTime() (time.Time, bool) {
	first, ok := int64(0), false
	for _, pn := range p.w.panes {
		if !ok || pn.end < first {
			first, ok = pn.end, true
		}
	}
	return time.UnixMicro(first), ok
}

// OnProcessingTime implements exec.ProcessingTimer: fires every window the
// clock has reached the end of. (Flink's timer is at the window's last
// millisecond, its clock's resolution; clink's clock reads microseconds,
// and a row taken within that last millisecond belongs to the window, so
// the window waits for its end.)
func (p *ProcTimeWindowAggregate) OnProcessingTime(ctx context.Context, out exec.Emitter) error {
	// The event-time operator fires a window once its watermark reaches
	// the window's last millisecond: end - 1 ms <= wm.
	wm := p.now().UnixMicro() - 1000
	if wm <= p.w.wm {
		return nil
	}
	p.w.wm = wm
	return p.w.fire(ctx, wm, out)
}

// OnWatermark forwards an event-time watermark: it fires nothing here.
func (p *ProcTimeWindowAggregate) OnWatermark(ctx context.Context, wm int64, out exec.Emitter) error {
	return out.EmitWatermark(ctx, wm)
}

// Finish fires every open window: the input ended.
func (p *ProcTimeWindowAggregate) Finish(ctx context.Context, _ int, out exec.Emitter) error {
	if p.w.err != nil {
		return p.w.err
	}
	p.w.wm = exec.MaxWatermark
	return p.w.fire(ctx, exec.MaxWatermark, out)
}

// Close releases the open windows.
func (p *ProcTimeWindowAggregate) Close() { p.w.Close() }

// SnapshotState implements exec.Snapshotter: the event-time operator's
// state (its panes, and the clock fired up to as its watermark).
func (p *ProcTimeWindowAggregate) SnapshotState(ctx context.Context, w exec.StateWriter) error {
	return p.w.SnapshotState(ctx, w)
}

// RestoreState implements exec.Snapshotter.
func (p *ProcTimeWindowAggregate) RestoreState(ctx context.Context, r exec.StateReader) error {
	return p.w.RestoreState(ctx, r)
}
