package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/mattn/go-runewidth"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/sqlvalue"
)

// tableSink is the human format. A bounded result is drawn with tablewriter
// when it ends, followed by "(N rows)". It keeps at most maxRows rows (the
// first half and the last half, see keptRows), so a huge result costs a few
// rows of memory and a screenful of output; the footer says how many more
// there were. Uncapped (maxRows 0), a result longer than streamAfter rows
// is not held: it streams in the tableau layout below, with widths taken
// from its first rows. An unbounded result
// never ends by itself, so it is printed as it arrives in the tableau style
// of Flink's SQL client: a header once, then one line per row in fixed
// column widths (values too wide are cut with "..."), flushed per batch.
type tableSink struct {
	opts sinkOptions
	gate outputGate

	mu      sync.Mutex
	schema  *arrow.Schema
	fns     []appendFunc
	right   []bool // right-align (numbers)
	bounded bool
	kept    keptRows // bounded: the rows shown, rendered at finish
	widths  []int    // unbounded or streaming: fixed column widths
	// streaming: an uncapped bounded result grew past streamAfter rows and
	// is printed as it arrives, through pager when the shell pages.
	streaming bool
	pager     io.WriteCloser
	buf       []byte
	line      []byte
	n         int64
}

func (s *tableSink) Columns(schema *arrow.Schema, bounded bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.schema = schema
	s.bounded = bounded
	s.fns = columnAppenders(schema, styleText)
	s.right = make([]bool, schema.NumFields())
	for i, f := range schema.Fields() {
		s.right[i] = isNumeric(f.Type)
	}
	s.gate.fn = s.opts.beforeOutput
	if bounded {
		s.kept = keptRows{max: s.opts.maxRows}
		return nil
	}
	if s.opts.unbounded != nil {
		s.opts.unbounded()
	}
	s.widths = make([]int, schema.NumFields())
	for i, f := range schema.Fields() {
		s.widths[i] = max(runewidth.StringWidth(f.Name), typeWidth(f.Type))
	}
	s.gate.open()
	if s.opts.expanded {
		return nil // records carry their own headers
	}
	out := s.border(s.line[:0])
	out = s.tableauRow(out, func(c int) string { return schema.Field(c).Name })
	out = s.border(out)
	s.line = out
	if _, err := s.opts.out.Write(out); err != nil {
		return err
	}
	return s.opts.out.Flush()
}

func (s *tableSink) Batch(b *exec.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fns == nil {
		return errNoColumns
	}
	return forEachRecord(s.opts.mem, b, func(rec arrow.RecordBatch) error {
		cols := rec.Columns()
		nrows := int(rec.NumRows())
		base := s.n
		s.n += int64(nrows)
		if s.bounded && !s.streaming {
			for i := 0; i < nrows; i++ {
				// Rows the cap drops are never rendered.
				if !s.kept.needed(base+int64(i), s.n) {
					continue
				}
				s.kept.add(base+int64(i), s.rowCells(cols, i))
			}
			if s.kept.max > 0 || len(s.kept.head) < streamAfter {
				return nil
			}
			return s.startStreaming()
		}
		out := s.line[:0]
		for i := 0; i < nrows; i++ {
			if s.opts.expanded {
				out = appendRecord(out, s.schema, base+int64(i)+1, s.rowCells(cols, i))
				continue
			}
			out = s.tableauRow(out, func(c int) string {
				return s.cell(c, cols[c], i)
			})
		}
		s.line = out
		return s.emit(out)
	})
}

// emit writes and flushes out. A streamed table whose pager the user quit
// cannot be written to: the query then stops, normally.
func (s *tableSink) emit(out []byte) error {
	_, err := s.opts.out.Write(out)
	if err == nil {
		err = s.opts.out.Flush()
	}
	if err != nil && s.pager != nil {
		return exec.ErrStop
	}
	return err
}

// streamAfter is how many rows of an uncapped bounded result are held to
// size the table; past them it streams.
const streamAfter = 1000

// maxStreamWidth caps a streamed column's width; longer values are cut
// with "...", as the tableau cuts them.
const maxStreamWidth = 80

// startStreaming prints the rows held so far in the tableau layout, with
// widths from them, and lets the rest of the result print as it arrives:
// an uncapped table of any length then costs a batch of memory, not the
// whole result. With the shell's pager on, the table goes to a pager
// started now, fed as rows arrive.
func (s *tableSink) startStreaming() error {
	s.streaming = true
	s.widths = make([]int, s.schema.NumFields())
	for i, f := range s.schema.Fields() {
		s.widths[i] = runewidth.StringWidth(f.Name)
	}
	for _, row := range s.kept.head {
		for c, v := range row {
			s.widths[c] = max(s.widths[c], min(displayWidth(v), maxStreamWidth))
		}
	}
	s.gate.open()
	if s.opts.pageStream != nil {
		if p := s.opts.pageStream(); p != nil {
			s.pager = p
			s.opts.out = bufio.NewWriter(p)
		}
	}
	out := s.line[:0]
	if !s.opts.expanded {
		out = s.border(out)
		out = s.tableauRow(out, func(c int) string { return s.schema.Field(c).Name })
		out = s.border(out)
	}
	for i, row := range s.kept.head {
		if s.opts.expanded {
			out = appendRecord(out, s.schema, int64(i)+1, row)
			continue
		}
		out = s.tableauRow(out, func(c int) string { return row[c] })
	}
	s.kept = keptRows{}
	s.line = out
	return s.emit(out)
}

func (s *tableSink) rowCells(cols []arrow.Array, i int) []string {
	row := make([]string, len(cols))
	for c, col := range cols {
		row[c] = s.cell(c, col, i)
	}
	return row
}

// cell renders value i of column c for the table: NULL for SQL NULL, the
// string 'NULL' quoted (sqlvalue.Display, the kernel's rule too).
func (s *tableSink) cell(c int, col arrow.Array, i int) string {
	if sqlvalue.IsNull(col, i) {
		return sqlvalue.NullText
	}
	s.buf = s.fns[c](col, i, s.buf[:0])
	return sqlvalue.Display(string(s.buf), false)
}

func (s *tableSink) border(out []byte) []byte {
	for _, w := range s.widths {
		out = append(out, '+')
		for k := 0; k < w+2; k++ {
			out = append(out, '-')
		}
	}
	return append(out, '+', '\n')
}

// tableauRow appends one fixed-width line; value(c) gives column c's text.
// Headers follow their column's alignment, so names sit over their values.
func (s *tableSink) tableauRow(out []byte, value func(c int) string) []byte {
	for c, w := range s.widths {
		v := value(c)
		if strings.ContainsAny(v, "\n\r\t") {
			v = controlToSpace.Replace(v)
		}
		vw := displayWidth(v)
		// Text too wide is cut; a number never is (a cut number reads as
		// another number): it widens its line instead.
		if vw > w && !s.right[c] {
			v = runewidth.Truncate(v, w, "...")
			vw = runewidth.StringWidth(v)
		}
		out = append(out, '|', ' ')
		if s.right[c] {
			out = appendSpaces(out, w-vw)
			out = append(out, v...)
		} else {
			out = append(out, v...)
			out = appendSpaces(out, w-vw)
		}
		out = append(out, ' ')
	}
	return append(out, '|', '\n')
}

var controlToSpace = strings.NewReplacer("\n", " ", "\r", " ", "\t", " ")

// displayWidth is the terminal width of v; ASCII (the common case) is its
// length.
func displayWidth(v string) int {
	for i := 0; i < len(v); i++ {
		if v[i] >= 0x80 {
			return runewidth.StringWidth(v)
		}
	}
	return len(v)
}

func appendSpaces(out []byte, n int) []byte {
	for ; n > 0; n-- {
		out = append(out, ' ')
	}
	return out
}

func (s *tableSink) finish(execErr error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.schema == nil {
		return s.opts.out.Flush()
	}
	if !s.bounded || s.streaming {
		s.gate.open()
		out := s.line[:0]
		if !s.opts.expanded {
			out = s.border(out)
		}
		out = fmt.Appendf(out, "%s\n", footer(s.n, 0, execErr))
		s.line = out
		err := s.emit(out)
		if s.pager != nil {
			// Into a pager the user may have quit: that is no error.
			err = s.pager.Close()
		}
		return err
	}
	// A failed query shows its error, not half a table; a cancelled one
	// shows nothing either (the shell says it was cancelled).
	if execErr != nil {
		return s.opts.out.Flush()
	}
	s.gate.open()
	// With a pager the whole table goes to it, which shows it when it is
	// taller than the screen.
	var paged bytes.Buffer
	w := io.Writer(s.opts.out)
	if s.opts.page != nil {
		w = &paged
	}
	if err := s.renderBounded(w); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "%s\n", footer(s.n, s.hidden(), nil)); err != nil {
		return err
	}
	if s.opts.page != nil {
		if err := s.opts.page(paged.Bytes()); err != nil {
			return err
		}
	}
	return s.opts.out.Flush()
}

func (s *tableSink) renderBounded(w io.Writer) error {
	head, tail := s.kept.rows()
	hidden := s.hidden()
	if s.opts.expanded {
		out := s.line[:0]
		for i, row := range head {
			out = appendRecord(out, s.schema, int64(i)+1, row)
		}
		if hidden > 0 {
			out = fmt.Appendf(out, "... %d more rows\n", hidden)
		}
		for i, row := range tail {
			out = appendRecord(out, s.schema, s.n-int64(len(tail)-i)+1, row)
		}
		s.line = out
		_, err := w.Write(out)
		return err
	}
	aligns := make([]tw.Align, len(s.right))
	for i, r := range s.right {
		aligns[i] = tw.AlignLeft
		if r {
			aligns[i] = tw.AlignRight
		}
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
	)
	t.Configure(func(cfg *tablewriter.Config) {
		// Column names and values exactly as they are: no upper-casing of
		// headers, no trimming of spaces, no wrapping of long values.
		cfg.Header.Formatting.AutoFormat = tw.Off
		cfg.Header.Formatting.AutoWrap = tw.WrapNone
		cfg.Row.Formatting.AutoWrap = tw.WrapNone
		cfg.Row.Alignment.PerColumn = aligns
		cfg.Behavior.TrimSpace = tw.Off
		cfg.Behavior.TrimTab = tw.Off
		cfg.Behavior.TrimLine = tw.Off
	})
	names := make([]string, s.schema.NumFields())
	for i, f := range s.schema.Fields() {
		names[i] = f.Name
	}
	t.Header(names)
	cells := head
	if hidden > 0 {
		gap := make([]string, len(names))
		for i := range gap {
			gap[i] = "..."
		}
		cells = append(append(cells[:len(cells):len(cells)], gap), tail...)
	} else {
		cells = append(cells, tail...)
	}
	if err := t.Bulk(cells); err != nil {
		return fmt.Errorf("table: %w", err)
	}
	return t.Render()
}

// hidden is how many rows of a bounded result the cap left out.
func (s *tableSink) hidden() int64 {
	if !s.bounded {
		return 0
	}
	return s.kept.hidden(s.n)
}

// footer is the line under a table, in the words the kernel uses: the row
// count, how the query ended (finished, interrupted, failed) and how many
// rows the cap left out, e.g. "5 rows, finished".
func footer(n, hidden int64, execErr error) string {
	state := "finished"
	switch {
	case errors.Is(execErr, context.Canceled):
		state = "interrupted"
	case execErr != nil:
		state = "failed"
	}
	text := rowsLabel(n) + ", " + state
	if hidden > 0 {
		text += fmt.Sprintf("; ... %d more rows not shown (\\set maxrows N, 0 for all)", hidden)
	}
	return text
}

func rowsLabel(n int64) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}

func isNumeric(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128:
		return true
	}
	return false
}

// typeWidth is a column's width in the tableau from its type alone, since an
// unbounded result's widths are fixed before the first row arrives. Strings
// and nested values get 30, Flink's tableau cap.
func typeWidth(dt arrow.DataType) int {
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return 5
	case *arrow.Int8Type:
		return 4
	case *arrow.Int16Type:
		return 6
	case *arrow.Int32Type:
		return 11
	case *arrow.Int64Type:
		return 20
	case *arrow.Float32Type:
		return 14
	case *arrow.Float64Type:
		return 24
	case *arrow.Decimal128Type:
		return int(t.Precision) + 2
	case *arrow.Date32Type:
		return 10
	case *arrow.TimestampType:
		switch t.Unit {
		case arrow.Second:
			return 19
		case arrow.Millisecond:
			return 23
		case arrow.Microsecond:
			return 26
		}
		return 29
	}
	return 30
}
