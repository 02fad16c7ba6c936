package main

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/changelog"
	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/sqlvalue"
)

// resultModeKey is Flink's SQL client setting for how an updating result
// (a changelog: GROUP BY over an unbounded input) is shown:
//
//	tableau   (default) rows print as they arrive, with their kind (op) first
//	changelog the same: every +I, -U, +U and -D row, as it arrives
//	table     the changelog is applied to a table, printed when the query
//	          ends (LIMIT, Ctrl-C, the end of a bounded input); on a
//	          terminal it is redrawn in place while the query runs
//
// Results that are not changelogs print the same in every mode.
const resultModeKey = "sql-client.execution.result-mode"

// settings is what the shell asks of a session that has session settings.
type settings interface {
	Settings() map[string]string
}

func (sh *shell) resultMode() string {
	if s, ok := sh.sess.(settings); ok {
		if m := s.Settings()[resultModeKey]; m != "" {
			return m
		}
	}
	return "tableau"
}

// tableModeSink applies a changelog to a table and hands the table to the
// format's sink when the query ends. A result without a leading "op"
// column passes straight through.
//
// With live set (the human format on a terminal), the table is instead
// redrawn in place while the query runs, at most every liveInterval, and
// the last frame stays on screen when it ends; the inner sink prints
// nothing.
type tableModeSink struct {
	inner sink
	// live, when set, draws the table while the query runs; beforeLive
	// runs once before the first frame (it halts the progress line, so
	// the two never share the screen). mem encodes the rows to render.
	live       *liveTable
	beforeLive func()
	mem        memory.Allocator

	mu        sync.Mutex
	changelog bool
	schema    *arrow.Schema // without op
	table     *changelog.Table
	// order keeps the table in rank order (a continuous top-n; see
	// ResultOrder), nil for arrival order.
	order func(a, b exec.Row) int
	// key is the table's upsert key (see ResultKey), nil for whole rows.
	key     []int
	dirty   bool // changes since the last frame
	stop    chan struct{}
	stopped chan struct{}
}

// liveInterval bounds the redraw rate of a live table (5 per second).
const liveInterval = 200 * time.Millisecond

// ResultOrder implements engine.OrderedWriter: the rank order of a
// continuous top-n, by the result's columns, of which the table drops the
// first (op).
func (t *tableModeSink) ResultOrder(keys []ops.SortKey) { t.order = engine.TableOrder(keys) }

// ResultKey implements engine.KeyedWriter: the columns that identify a row
// of the table (an updating GROUP BY's keys).
func (t *tableModeSink) ResultKey(cols []int) { t.key = engine.TableKey(cols) }

func (t *tableModeSink) Columns(s *arrow.Schema, bounded bool) error {
	if s.NumFields() == 0 || s.Field(0).Name != "op" || s.Field(0).Type.ID() != arrow.STRING {
		return t.inner.Columns(s, bounded)
	}
	t.changelog = true
	t.table = changelog.NewTable(t.key, t.order)
	t.schema = arrow.NewSchema(s.Fields()[1:], nil)
	if t.live == nil {
		return t.inner.Columns(t.schema, true)
	}
	if t.beforeLive != nil {
		t.beforeLive()
	}
	t.mu.Lock()
	err := t.drawLocked(false, false)
	t.mu.Unlock()
	if err != nil {
		return err
	}
	t.stop, t.stopped = make(chan struct{}), make(chan struct{})
	go t.redraw()
	return nil
}

// redraw draws the table when it changed, at most every liveInterval, until
// finish stops it. A draw error (stdout gone) ends the redraws; finish
// reports it through its own final draw.
func (t *tableModeSink) redraw() {
	defer close(t.stopped)
	tk := time.NewTicker(liveInterval)
	defer tk.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tk.C:
		}
		t.mu.Lock()
		var err error
		if t.dirty {
			err = t.drawLocked(false, false)
		}
		t.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (t *tableModeSink) drawLocked(final, all bool) error {
	t.dirty = false
	names := make([]string, t.schema.NumFields())
	right := make([]bool, t.schema.NumFields())
	for i, f := range t.schema.Fields() {
		names[i], right[i] = f.Name, isNumeric(f.Type)
	}
	return t.live.draw(liveFrame{
		names: names, right: right, rows: t.table.Len(), cells: t.cellsLocked,
		changes: t.table.Changes(), at: time.Now(), final: final, all: all,
	})
}

// cellsLocked renders the first n rows with the table format's value text,
// through Arrow like every other sink.
func (t *tableModeSink) cellsLocked(n int) ([][]string, error) {
	if n == 0 {
		return nil, nil
	}
	rec, err := exec.EncodeRows(t.mem, t.schema, t.table.Rows(n))
	if err != nil {
		return nil, fmt.Errorf("result mode table: %w", err)
	}
	defer rec.Release()
	fns := columnAppenders(t.schema, styleText)
	cells := make([][]string, n)
	var buf []byte
	for i := range cells {
		row := make([]string, len(fns))
		for c, fn := range fns {
			col := rec.Column(c)
			if sqlvalue.IsNull(col, i) {
				row[c] = sqlvalue.NullText
				continue
			}
			buf = fn(col, i, buf[:0])
			row[c] = sqlvalue.Display(string(buf), false)
		}
		cells[i] = row
	}
	return cells, nil
}

func (t *tableModeSink) Batch(b *exec.Batch) error {
	if !t.changelog {
		return t.inner.Batch(b)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dirty = true
	// A retraction of a row the table does not hold changes nothing; the
	// table shows what the changelog says, as the kernel's does.
	if err := t.table.ApplyBatch(b, b.Len()); err != nil && !errors.Is(err, changelog.ErrNotInTable) {
		return fmt.Errorf("result mode table: %w", err)
	}
	return nil
}

func (t *tableModeSink) finish(err error) error {
	if t.changelog && t.live != nil && t.stop != nil {
		// The final frame stays on screen. A query that ended by itself
		// shows its whole result; a cancelled or failed one leaves the
		// screen as it was, at the last values.
		close(t.stop)
		<-t.stopped
		t.mu.Lock()
		derr := t.drawLocked(true, err == nil)
		t.mu.Unlock()
		if derr != nil && err == nil {
			err = derr
		}
		return t.inner.finish(err)
	}
	if t.changelog && t.table.Len() > 0 {
		b := exec.NewRowBatch(t.schema, t.table.Rows(-1))
		berr := t.inner.Batch(b)
		b.Release()
		if berr != nil && err == nil {
			err = berr
		}
	}
	return t.inner.finish(err)
}
