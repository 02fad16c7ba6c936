// Package sinks holds the terminal connectors that write nowhere durable:
// 'print' (rows to stdout, as Flink's print connector) and 'blackhole'
// (counts rows, for benchmarks).
package sinks

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
)

func init() {
	connectors.Register("print", func(options map[string]string, declared *arrow.Schema) (connectors.Table, error) {
		return NewPrintTable(options, declared)
	})
	connectors.Register("blackhole", func(options map[string]string, declared *arrow.Schema) (connectors.Table, error) {
		return NewBlackholeTable(options, declared)
	})
}

// sinkOnly is the source half of a sink-only table: it refuses scans.
type sinkOnly struct {
	connector string
	schema    *arrow.Schema
}

func (t sinkOnly) Schema() *arrow.Schema { return t.schema }
func (t sinkOnly) Bounded() bool         { return true }
func (t sinkOnly) Open(connectors.ScanSpec) (exec.Source, error) {
	return nil, fmt.Errorf("connector '%s' is a sink: it cannot be read (use it with INSERT INTO)", t.connector)
}

func checkOptions(connector string, options map[string]string, known ...string) error {
	for k := range options {
		if k == "connector" {
			continue
		}
		ok := false
		for _, kk := range known {
			ok = ok || k == kk
		}
		if !ok {
			return fmt.Errorf("%s: unknown option '%s'", connector, k)
		}
	}
	return nil
}

func declaredOrErr(connector string, declared *arrow.Schema) (*arrow.Schema, error) {
	if declared == nil || len(declared.Fields()) == 0 {
		return nil, fmt.Errorf("%s: the table needs declared columns", connector)
	}
	return declared, nil
}

// PrintTable is a 'print' table.
type PrintTable struct {
	sinkOnly
	ident  string
	stderr bool
	w      io.Writer // nil: stdout or stderr
}

// NewPrintTable builds a print table ('print-identifier', 'standard-error').
func NewPrintTable(options map[string]string, declared *arrow.Schema) (*PrintTable, error) {
	if err := checkOptions("print", options, "print-identifier", "standard-error", "sink.parallelism"); err != nil {
		return nil, err
	}
	schema, err := declaredOrErr("print", declared)
	if err != nil {
		return nil, err
	}
	t := &PrintTable{sinkOnly: sinkOnly{"print", schema}, ident: options["print-identifier"]}
	if v, ok := options["standard-error"]; ok {
		if t.stderr, err = strconv.ParseBool(v); err != nil {
			return nil, fmt.Errorf("print: option 'standard-error' = '%s': want 'true' or 'false'", v)
		}
	}
	return t, nil
}

// WithWriter returns a copy printing to w (tests).
func (t *PrintTable) WithWriter(w io.Writer) *PrintTable {
	c := *t
	c.w = w
	return &c
}

// Describe is the table for EXPLAIN.
func (t *PrintTable) Describe() string {
	if t.ident != "" {
		return fmt.Sprintf("print '%s'", t.ident)
	}
	return "print"
}

// OpenSink returns the printing operator.
func (t *PrintTable) OpenSink(connectors.SinkSpec) (exec.Operator, error) {
	w := t.w
	if w == nil {
		w = os.Stdout
		if t.stderr {
			w = os.Stderr
		}
	}
	prefix := "+I["
	if t.ident != "" {
		prefix = t.ident + "> +I["
	}
	return &Print{w: bufio.NewWriter(w), prefix: prefix, schema: t.schema}, nil
}

// Print writes each row as '+I[v1, v2]' (Flink's print format). Columnar
// batches are formatted cell by cell from their columns, without
// materialising the batch.
type Print struct {
	exec.Base
	mu     sync.Mutex
	w      *bufio.Writer
	prefix string
	schema *arrow.Schema
}

// Kind names the sink.
func (p *Print) Kind() string { return "print-sink" }

// Capabilities: it takes columnar batches directly.
func (p *Print) Capabilities() exec.Capabilities { return exec.Capabilities{IngestsColumnar: true} }

// ProcessColumnar formats from the Arrow columns.
func (p *Print) ProcessColumnar(_ context.Context, _ int, b *exec.Batch, _ exec.Emitter) (bool, error) {
	rec := b.Record()
	p.mu.Lock()
	defer p.mu.Unlock()
	var sb strings.Builder
	for i := 0; i < int(rec.NumRows()); i++ {
		sb.Reset()
		sb.WriteString(p.prefix)
		for c := 0; c < int(rec.NumCols()); c++ {
			if c > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(format(exec.Value(rec.Column(c), i), rec.Schema().Field(c).Type))
		}
		sb.WriteString("]\n")
		if _, err := p.w.WriteString(sb.String()); err != nil {
			return true, err
		}
	}
	return true, p.w.Flush()
}

// Process is the row path.
func (p *Print) Process(_ context.Context, _ int, b *exec.Batch, _ exec.Emitter) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	schema := b.Schema()
	for _, r := range b.Rows() {
		p.w.WriteString(p.prefix)
		for c, v := range r {
			if c > 0 {
				p.w.WriteString(", ")
			}
			p.w.WriteString(format(v, schema.Field(c).Type))
		}
		if _, err := p.w.WriteString("]\n"); err != nil {
			return err
		}
	}
	return p.w.Flush()
}

func format(v any, t arrow.DataType) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x) // Flink prints true/false
	}
	return expr.FormatValue(v, t)
}

// OnWatermark: nothing to forward.
func (p *Print) OnWatermark(context.Context, int64, exec.Emitter) error { return nil }

// Finish flushes.
func (p *Print) Finish(context.Context, int, exec.Emitter) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.w.Flush()
}

// BlackholeTable is a 'blackhole' table.
type BlackholeTable struct{ sinkOnly }

// NewBlackholeTable builds a blackhole table.
func NewBlackholeTable(options map[string]string, declared *arrow.Schema) (*BlackholeTable, error) {
	if err := checkOptions("blackhole", options); err != nil {
		return nil, err
	}
	schema, err := declaredOrErr("blackhole", declared)
	if err != nil {
		return nil, err
	}
	return &BlackholeTable{sinkOnly{"blackhole", schema}}, nil
}

// Describe is the table for EXPLAIN.
func (t *BlackholeTable) Describe() string { return "blackhole" }

// OpenSink returns the counting operator.
func (t *BlackholeTable) OpenSink(connectors.SinkSpec) (exec.Operator, error) {
	return &Blackhole{}, nil
}

// Blackhole counts rows and batches through b.Len(): it never materialises
// a batch, on either path.
type Blackhole struct {
	exec.Base
	rows, batches atomic.Int64
}

// Kind names the sink.
func (b *Blackhole) Kind() string { return "blackhole-sink" }

// Capabilities: it takes columnar batches directly.
func (b *Blackhole) Capabilities() exec.Capabilities { return exec.Capabilities{IngestsColumnar: true} }

// ProcessColumnar counts.
func (b *Blackhole) ProcessColumnar(_ context.Context, _ int, batch *exec.Batch, _ exec.Emitter) (bool, error) {
	b.rows.Add(int64(batch.Len()))
	b.batches.Add(1)
	return true, nil
}

// Process counts too: Len never decodes.
func (b *Blackhole) Process(_ context.Context, _ int, batch *exec.Batch, _ exec.Emitter) error {
	b.rows.Add(int64(batch.Len()))
	b.batches.Add(1)
	return nil
}

// OnWatermark: nothing to forward.
func (b *Blackhole) OnWatermark(context.Context, int64, exec.Emitter) error { return nil }

// Rows is the number of rows swallowed.
func (b *Blackhole) Rows() int64 { return b.rows.Load() }

// Batches is the number of batches swallowed.
func (b *Blackhole) Batches() int64 { return b.batches.Load() }
