package dispatch

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/cmd/clink-kernel/internal/wire"
	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/changelog"
	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/sqlvalue"
)

// liveTail is how many rows a live (unbounded) result shows unless
// max_rows is set: the latest rows, or the first of an updating table.
const liveTail = 20

// chartMaxRows caps the rows inlined into a chart's data.
const chartMaxRows = 10000

type resultMode int

const (
	modeTable resultMode = iota // bounded: one execute_result at the end
	modeLive                    // unbounded: a display updated in place
	modeChart                   // a Vega-Lite chart; over a stream, redrawn in place while it runs
	modeText                    // output=text: a text table on stdout
)

// column is one result column as the renderers need it.
type column struct {
	name string
	typ  arrow.DataType
}

// cellValue is one formatted value; NULL is kept apart from the string
// "NULL" so the HTML can draw it distinctly.
type cellValue struct {
	s    string
	null bool
}

// resultWriter is the engine.ResultWriter of one statement. The values are
// formatted as they arrive (a batch is only lent for the call), only for
// the rows that will be shown: past the cap rows are just counted.
type resultWriter struct {
	out *cellOutput

	mu        sync.Mutex
	cols      []column
	started   bool
	mode      resultMode
	limit     int // rows kept (table, chart, text), rows shown (live)
	rows      [][]cellValue
	total     int64
	displayID string
	lastSend  time.Time
	stopped   string // why the query ended early, for the footer
	// changelog: an updating result (its first column is the row kind
	// "op"); the live display shows table, the changes applied.
	changelog bool
	table     *changelog.Table
	// order keeps that table in rank order (a continuous top-n; see
	// ResultOrder).
	order func(a, b exec.Row) int
	// key is the table's upsert key (see ResultKey), nil for whole rows.
	key []int
	// text spells each column's values (sqlvalue's canonical text, as the
	// shell and CAST(x AS VARCHAR)), reading the Arrow arrays directly.
	text    []sqlvalue.AppendFunc
	scratch []byte
	// progress is the statement's progress display (nil when none);
	// an unbounded result stops it, its live table being the progress.
	progress *progressDisplay
}

// cellOf is a row-form value as a cell: the canonical text, NULL apart.
func cellOf(v any, t arrow.DataType) cellValue {
	if r, ok := v.(exec.Row); ok {
		v = []any(r)
	}
	s, null := sqlvalue.Format(v, t)
	if null {
		return cellValue{s: "NULL", null: true}
	}
	return cellValue{s: s}
}

// ResultOrder implements engine.OrderedWriter: the rank order of a
// continuous top-n by the result's columns, of which the table drops the
// first (op).
func (w *resultWriter) ResultOrder(keys []ops.SortKey) {
	w.mu.Lock()
	w.order = engine.TableOrder(keys)
	w.mu.Unlock()
}

// ResultKey implements engine.KeyedWriter: the columns that identify a row
// of the table (an updating GROUP BY's keys).
func (w *resultWriter) ResultKey(cols []int) {
	w.mu.Lock()
	w.key = engine.TableKey(cols)
	w.mu.Unlock()
}

// Columns implements engine.ResultWriter.
func (w *resultWriter) Columns(schema *arrow.Schema, bounded bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.started = true
	// A stream's live table or chart is its own progress: it takes over
	// the progress display's slot, if drawn.
	var inherited string
	if !bounded {
		inherited = w.progress.handOver()
	}
	w.cols = make([]column, schema.NumFields())
	w.text = make([]sqlvalue.AppendFunc, schema.NumFields())
	for i, f := range schema.Fields() {
		w.cols[i] = column{name: f.Name, typ: f.Type}
		w.text[i] = sqlvalue.Appender(f.Type)
	}
	o := w.out.opts
	w.limit = w.out.k.maxRows
	if o.maxRows > 0 {
		w.limit = o.maxRows
	}
	switch {
	case o.chart != "":
		w.mode, w.limit = modeChart, chartMaxRows
		if _, _, err := chartColumns(w.cols, o); err != nil {
			return err
		}
		if !bounded {
			// A stream's chart is a display redrawn as rows arrive (at the
			// live table's rate), so the chart grows while the query runs.
			w.startLive(inherited, map[string]any{"text/html": "<small>chart: waiting for rows</small>"})
			inherited = ""
		}
	case o.text:
		w.mode = modeText
	case !bounded:
		if len(w.cols) > 0 && w.cols[0].name == "op" && w.cols[0].typ.ID() == arrow.STRING {
			w.changelog = true
			w.table = changelog.NewTable(w.key, w.order)
			w.cols = w.cols[1:]
		}
		w.mode = modeLive
		w.limit = liveTail
		if o.maxRows > 0 {
			w.limit = o.maxRows
		} else if w.out.k.maxRowsSet {
			w.limit = w.out.k.maxRows
		}
		w.startLive(inherited, firstDrawing(w.liveBundle("waiting for rows"), liveStatus))
		inherited = ""
	}
	if inherited != "" {
		w.out.dropTransient() // a stream printed as text: no display of its own
	}
	return nil
}

// startLive draws the first state of a live display: into the progress
// display it inherits (an update, which jupyter console does not print),
// or as a new display.
func (w *resultWriter) startLive(inherited string, data map[string]any) {
	msgType := "update_display_data"
	w.displayID = inherited
	if w.displayID == "" {
		w.displayID, msgType = wire.NewID(), "display_data"
	}
	w.out.publish(msgType, map[string]any{
		"data":      data,
		"metadata":  map[string]any{},
		"transient": map[string]any{"display_id": w.displayID},
	})
	w.lastSend = time.Now()
}

// Batch implements engine.ResultWriter.
func (w *resultWriter) Batch(b *exec.Batch) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := int64(b.Len())
	if max := w.out.opts.rows; max > 0 && w.total+n >= max {
		n = max - w.total
		w.stopped = fmt.Sprintf("stopped at rows=%d", max)
	}
	if w.changelog {
		// A retraction of a row the table does not hold changes nothing,
		// as in the shell's table mode.
		if err := w.table.ApplyBatch(b, int(n)); err != nil && !errors.Is(err, changelog.ErrNotInTable) {
			return err
		}
	} else if b.IsColumnar() {
		rec := b.Record()
		for i := 0; i < int(n); i++ {
			if row := w.slot(); row != nil {
				for c := range row {
					col := rec.Column(c)
					if col.IsNull(i) {
						row[c] = cellValue{s: "NULL", null: true}
					} else {
						w.scratch = w.text[c](col, i, w.scratch[:0])
						row[c] = cellValue{s: string(w.scratch)}
					}
				}
			}
		}
	} else {
		rows := b.Rows()
		for i := 0; i < int(n); i++ {
			if row := w.slot(); row != nil {
				for c := range row {
					row[c] = cellOf(rows[i][c], w.cols[c].typ)
				}
			}
		}
	}
	w.total += n
	if w.displayID != "" && time.Since(w.lastSend) >= w.out.k.liveInterval {
		if err := w.sendLive(); err != nil {
			return err
		}
	}
	if w.stopped != "" {
		return exec.ErrStop
	}
	return nil
}

// slot returns the row to fill for the next result row, or nil when that
// row will not be shown (past the cap of a table).
func (w *resultWriter) slot() []cellValue {
	if w.mode == modeLive {
		if len(w.rows) < w.limit {
			w.rows = append(w.rows, make([]cellValue, len(w.cols)))
			return w.rows[len(w.rows)-1]
		}
		// Reuse the oldest row's storage: the tail is a ring in disguise.
		first := w.rows[0]
		copy(w.rows, w.rows[1:])
		w.rows[len(w.rows)-1] = first
		return first
	}
	if len(w.rows) >= w.limit {
		return nil
	}
	w.rows = append(w.rows, make([]cellValue, len(w.cols)))
	return w.rows[len(w.rows)-1]
}

// liveBundle draws the live table: at most limit rows, and a footer that
// says how many rows (and, for an updating table, changes) there are.
func (w *resultWriter) liveBundle(status string) map[string]any {
	rows := w.rows
	footer := rowCount(w.total)
	switch {
	case w.changelog:
		// The whole table is kept (a retraction can name any row); only
		// its head (rank order) or its latest changed rows are drawn.
		footer = fmt.Sprintf("%s after %d changes", rowCount(int64(w.table.Len())), w.total)
		shown := w.table.Rows(-1)
		if w.table.Len() > w.limit {
			if w.order != nil {
				shown = w.table.Rows(w.limit)
				footer += fmt.Sprintf(", showing the first %d", w.limit)
			} else {
				shown = w.table.LastChanged(w.limit)
				footer += fmt.Sprintf(", showing the %d last changed", w.limit)
			}
		}
		rows = w.cells(shown)
	case w.total > int64(len(w.rows)):
		footer += fmt.Sprintf(", showing the last %d", len(w.rows))
	}
	if status != "" {
		footer += ", " + status
	}
	return map[string]any{
		"text/plain": renderText(w.cols, rows, footer),
		"text/html":  renderHTML(w.cols, rows, footer),
	}
}

// liveStatus is what jupyter console prints when a live table starts: it
// ignores update_display_data, so it shows the first drawing's text and
// then the final table only.
const liveStatus = "streaming: the table follows when the query ends (Ctrl-C or interrupt stops it)"

// firstDrawing is a transient display's first drawing: its HTML, and as
// text only status (a line, or nothing), because jupyter console prints
// that text and never the updates that follow (which carry both).
func firstDrawing(bundle map[string]any, status string) map[string]any {
	d := map[string]any{"text/html": bundle["text/html"]}
	if status != "" {
		d["text/plain"] = status
	}
	return d
}

// cells formats rows of the changelog table for display.
func (w *resultWriter) cells(rows []exec.Row) [][]cellValue {
	out := make([][]cellValue, len(rows))
	for i, r := range rows {
		out[i] = make([]cellValue, len(w.cols))
		for c := range out[i] {
			out[i][c] = cellOf(r[c], w.cols[c].typ)
		}
	}
	return out
}

// sendLive updates the live display with the table (or chart) so far.
func (w *resultWriter) sendLive() error {
	var bundle map[string]any
	if w.mode == modeChart {
		var err error
		if bundle, err = w.chartBundle("running"); err != nil {
			return err
		}
	} else {
		bundle = w.liveBundle("running")
	}
	w.out.publish("update_display_data", map[string]any{
		"data":      bundle,
		"metadata":  map[string]any{},
		"transient": map[string]any{"display_id": w.displayID},
	})
	text := bundle["text/plain"].(string)
	w.out.lastText = &text
	w.lastSend = time.Now()
	return nil
}

// chartBundle is the chart of the rows so far, with the text table for
// frontends without Vega-Lite.
func (w *resultWriter) chartBundle(reason string) (map[string]any, error) {
	spec, err := chartSpec(w.cols, w.rows, w.out.opts)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"application/vnd.vegalite.v5+json": spec,
		"text/plain":                       renderText(w.cols, w.rows, w.footer(reason)),
	}, nil
}

// dropLive removes the live display before the final result is sent as
// an output of its own (which frontends that ignore display updates, such
// as jupyter console, still show), so JupyterLab does not show it twice
// and a saved notebook keeps no emptied display. It respects the update
// rate.
func (w *resultWriter) dropLive() {
	if wait := w.out.k.liveInterval - time.Since(w.lastSend); wait > 0 {
		time.Sleep(wait)
	}
	w.out.dropTransient()
}

// finish sends the statement's final result. reason says why a query ended
// early ("interrupted", "failed", a bound), "" when it just ended.
func (w *resultWriter) finish(reason string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.started {
		return nil
	}
	if reason == "" {
		reason = w.stopped
	}
	switch w.mode {
	case modeLive:
		w.dropLive()
		if reason == "" {
			reason = "finished"
		}
		bundle := w.liveBundle(reason)
		w.out.publish("execute_result", map[string]any{
			"execution_count": w.out.count,
			"data":            bundle,
			"metadata":        map[string]any{},
		})
		text := bundle["text/plain"].(string)
		w.out.lastText = &text
	case modeChart:
		if reason == "failed" || reason == "interrupted" {
			return nil // a stream's live chart stays as last drawn
		}
		bundle, err := w.chartBundle(reason)
		if err != nil {
			return err
		}
		if w.displayID != "" {
			w.dropLive()
		}
		w.out.publish("display_data", map[string]any{"data": bundle, "metadata": map[string]any{}})
		text := bundle["text/plain"].(string)
		w.out.lastText = &text
	case modeText:
		w.out.stdout(renderText(w.cols, w.rows, w.footer(reason)))
	default:
		if reason == "failed" || reason == "interrupted" {
			return nil
		}
		footer := w.footer(reason)
		text := renderText(w.cols, w.rows, footer)
		w.out.publish("execute_result", map[string]any{
			"execution_count": w.out.count,
			"data":            map[string]any{"text/plain": text, "text/html": renderHTML(w.cols, w.rows, footer)},
			"metadata":        map[string]any{},
		})
		w.out.lastText = &text
	}
	return nil
}

// footer is the line under a finished table, in the shell's words: the
// row count, how the query ended, and how many rows the cap left out, e.g.
// "5 rows, finished" or "600 rows, finished; 595 more rows not shown".
func (w *resultWriter) footer(reason string) string {
	if reason == "" {
		reason = "finished"
	}
	s := rowCount(w.total) + ", " + reason
	if shown := int64(len(w.rows)); shown < w.total {
		s += fmt.Sprintf("; %d more rows not shown", w.total-shown)
	}
	return s
}

// rowCount is "1 row" or "5 rows", as every footer counts.
func rowCount(n int64) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}
