package main

import (
	"bufio"
	"bytes"
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/sql"
)

// allTypesSchema has a column of every type in exec.Row's list.
func allTypesSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "d", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "ts_ms", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "ts_us", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "ts_ns", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
		{Name: "dt", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "st", Type: arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
		), Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
	}, nil)
}

var tsBase = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// allTypesRows: a full row, a NULL row, a row of edge values, and a row
// whose only value is the empty string.
func allTypesRows() []exec.Row {
	n := func(v int64) decimal128.Num { return decimal128.FromI64(v) }
	return []exec.Row{
		{true, int32(1), int64(-9007199254740993), float32(1.5), 0.1, n(12345), `a,b "c"`, []byte{0x00, 0xff},
			arrow.Timestamp(tsBase.UnixMilli() + 120), arrow.Timestamp(tsBase.UnixMicro() + 1),
			arrow.Timestamp(tsBase.UnixNano() + 123456789), arrow.Date32FromTime(tsBase),
			exec.Row{int64(1), "x"}, []any{int64(1), int64(2)}},
		{nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
		{false, int32(-5), int64(0), float32(1e-7), math.NaN(), n(-5), "line1\nline2\tx", []byte{},
			arrow.Timestamp(tsBase.UnixMilli()), arrow.Timestamp(-1), arrow.Timestamp(tsBase.UnixNano()),
			arrow.Date32(0), exec.Row{nil, "y"}, []any{nil, int64(3)}},
		{nil, nil, nil, nil, math.Inf(-1), nil, "", nil, nil, nil, nil, nil, nil, []any{}},
	}
}

func allTypesRecord(t *testing.T, mem memory.Allocator) arrow.RecordBatch {
	t.Helper()
	rec, err := exec.EncodeRows(mem, allTypesSchema(), allTypesRows())
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// fakeSession is a scripted engine for the shell's tests.
type fakeSession struct {
	mem memory.Allocator

	mu       sync.Mutex
	executed []string
	// started gets the statement text when a blocking statement (STREAM)
	// has sent its first batch.
	started chan string
}

func newFake(mem memory.Allocator) *fakeSession {
	return &fakeSession{mem: mem, started: make(chan string, 4)}
}

func (f *fakeSession) Tables() []engine.TableInfo {
	return []engine.TableInfo{
		{Name: "bid", Kind: "table", Connector: "nexmark", Schema: arrow.NewSchema([]arrow.Field{
			{Name: "auction", Type: arrow.PrimitiveTypes.Int64},
			{Name: "price", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
		}, nil)},
		{Name: "v", Kind: "view", Schema: arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.BinaryTypes.String, Nullable: true}}, nil), Bounded: true},
	}
}

func (f *fakeSession) Execute(ctx context.Context, stmt string, w engine.ResultWriter, opts engine.ExecOptions) (engine.Outcome, error) {
	f.mu.Lock()
	f.executed = append(f.executed, stmt)
	f.mu.Unlock()
	one := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	words := strings.Join(strings.Fields(stmt), " ")
	switch {
	case strings.HasPrefix(words, "SELECT 1"):
		if err := w.Columns(one, true); err != nil {
			return engine.Outcome{}, err
		}
		b := exec.NewRowBatch(one, []exec.Row{{int64(1)}})
		defer b.Release()
		return engine.Outcome{Rows: 1}, w.Batch(b)
	case stmt == "SELECT all":
		if err := w.Columns(allTypesSchema(), true); err != nil {
			return engine.Outcome{}, err
		}
		rec, err := exec.EncodeRows(f.mem, allTypesSchema(), allTypesRows())
		if err != nil {
			return engine.Outcome{}, err
		}
		b := exec.NewColumnarBatch(rec)
		defer b.Release()
		return engine.Outcome{Rows: 4}, w.Batch(b)
	case strings.HasPrefix(stmt, "DESCRIBE "):
		// What the engine's DESCRIBE gives: a row per column.
		desc := arrow.NewSchema([]arrow.Field{
			{Name: "name", Type: arrow.BinaryTypes.String},
			{Name: "type", Type: arrow.BinaryTypes.String},
			{Name: "null", Type: arrow.FixedWidthTypes.Boolean},
		}, nil)
		name := strings.Trim(strings.TrimPrefix(stmt, "DESCRIBE "), "`")
		for _, tbl := range f.Tables() {
			if tbl.Name != name {
				continue
			}
			if err := w.Columns(desc, true); err != nil {
				return engine.Outcome{}, err
			}
			var rows []exec.Row
			for _, fd := range tbl.Schema.Fields() {
				rows = append(rows, exec.Row{fd.Name, sql.TypeString(fd.Type), fd.Nullable})
			}
			b := exec.NewRowBatch(desc, rows)
			defer b.Release()
			return engine.Outcome{Rows: int64(len(rows))}, w.Batch(b)
		}
		return engine.Outcome{}, &sql.Error{Msg: "no table " + name}
	case strings.HasPrefix(stmt, "CREATE"):
		return engine.Outcome{Message: "Table 't' created."}, nil
	case strings.HasPrefix(stmt, "EXPLAIN"):
		return engine.Outcome{Text: "Scan t\n  columnar: yes"}, nil
	case strings.Contains(stmt, "bad"):
		idx := strings.Index(stmt, "bad")
		line := 1 + strings.Count(stmt[:idx], "\n")
		col := idx - strings.LastIndex(stmt[:idx], "\n")
		return engine.Outcome{}, &sql.Error{Msg: "unknown column 'bad'", Line: line, Column: col}
	case stmt == "PANIC":
		panic("boom")
	case stmt == "STREAM":
		// Unbounded: batches until cancelled.
		if err := w.Columns(one, false); err != nil {
			return engine.Outcome{}, err
		}
		for i := int64(0); ; i++ {
			b := exec.NewRowBatch(one, []exec.Row{{i}})
			err := w.Batch(b)
			b.Release()
			if err != nil {
				return engine.Outcome{}, err
			}
			if i == 0 {
				f.started <- stmt
			}
			select {
			case <-ctx.Done():
				return engine.Outcome{}, ctx.Err()
			case <-time.After(time.Millisecond):
			}
		}
	}
	return engine.Outcome{}, &sql.Error{Msg: "syntax error near '" + stmt + "'"}
}

func (f *fakeSession) statements() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.executed...)
}

// testShell is a shell writing into buffers.
type testShell struct {
	*shell
	stdout, stderr *bytes.Buffer
	fake           *fakeSession
}

func newTestShell(t *testing.T, format string) *testShell {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	var stdout, stderr bytes.Buffer
	fake := newFake(mem)
	return &testShell{
		shell: &shell{sess: fake, out: bufio.NewWriter(&stdout), errw: &stderr,
			format: format, mem: mem},
		stdout: &stdout, stderr: &stderr, fake: fake,
	}
}
