package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
)

// Output formats (--format, \format).
const (
	formatTable  = "table"
	formatCSV    = "csv"
	formatTSV    = "tsv"
	formatJSON   = "json"
	formatNDJSON = "ndjson"
)

var formatNames = []string{formatTable, formatCSV, formatTSV, formatJSON, formatNDJSON}

func validFormat(name string) error {
	for _, f := range formatNames {
		if name == f {
			return nil
		}
	}
	return fmt.Errorf("unknown format %q (want one of %s)", name, strings.Join(formatNames, ", "))
}

// sink renders one statement's result. The engine drives it through
// engine.ResultWriter; the shell calls finish once Execute has returned.
type sink interface {
	engine.ResultWriter
	// finish completes the output (closes a JSON array, renders a buffered
	// table); err is what Execute returned.
	finish(err error) error
}

// sinkOptions are what every sink needs besides its format.
type sinkOptions struct {
	out *bufio.Writer
	// beforeOutput runs once, before the first byte of results is written
	// (it erases the progress line). May be nil.
	beforeOutput func()
	// unbounded is told when the result turns out to be unbounded (the
	// progress line is for bounded queries only). May be nil.
	unbounded func()
	// mem encodes row batches into Arrow (see forEachRecord).
	mem memory.Allocator
	// maxRows caps a bounded table (the table format only; machine
	// formats print every row); 0 shows all.
	maxRows int
	// expanded prints the table format one record per block (\x).
	expanded bool
	// page, when set, takes a bounded table whole (its text and footer)
	// instead of out: the shell's pager.
	page func(text []byte) error
	// pageStream, when set, starts the pager for a table that streams (an
	// uncapped result past its first rows, taller than any screen); nil
	// when it cannot start. Closing the writer waits for the pager.
	pageStream func() io.WriteCloser
}

func newSink(format string, o sinkOptions) sink {
	if o.mem == nil {
		o.mem = memory.DefaultAllocator
	}
	switch format {
	case formatCSV:
		return &delimSink{opts: o, sep: ','}
	case formatTSV:
		return &delimSink{opts: o, sep: '\t'}
	case formatJSON:
		return &jsonSink{opts: o}
	case formatNDJSON:
		return &jsonSink{opts: o, nd: true}
	default:
		return &tableSink{opts: o}
	}
}

// outputGate runs beforeOutput at most once.
type outputGate struct {
	once sync.Once
	fn   func()
}

func (g *outputGate) open() {
	g.once.Do(func() {
		if g.fn != nil {
			g.fn()
		}
	})
}

// forEachRecord hands fn the batch as Arrow. A columnar batch's record is
// used as is: b.Rows() is never called on it, so printing a result does not
// materialise it. A row batch is encoded into Arrow once, so both carriers go
// through the same typed formatters and cannot print differently.
func forEachRecord(mem memory.Allocator, b *exec.Batch, fn func(rec arrow.RecordBatch) error) error {
	if b.IsColumnar() {
		return fn(b.Record())
	}
	rec, err := exec.EncodeRows(mem, b.Schema(), b.Rows())
	if err != nil {
		return fmt.Errorf("result: %w", err)
	}
	defer rec.Release()
	return fn(rec)
}
