package sinks_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/connectors/sinks"
	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
)

var schema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
}, nil)

func columnar(mem memory.Allocator, n int) *exec.Batch {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%2 == 1 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("n%d", i))
		}
		b.Field(2).(*array.BooleanBuilder).Append(i%2 == 0)
	}
	return exec.NewColumnarBatch(b.NewRecordBatch())
}

func TestPrintFormatsBothPaths(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tbl, err := sinks.NewPrintTable(map[string]string{"connector": "print", "print-identifier": "job"}, schema)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	op, err := tbl.WithWriter(&buf).OpenSink(connectors.SinkSpec{Name: "p"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b := columnar(mem, 2)
	if took, err := exec.Dispatch(ctx, op, true, 0, b, nil); err != nil || !took {
		t.Fatalf("columnar hook: %v %v", took, err)
	}
	if b.Materialized() {
		t.Fatal("print materialised a columnar batch")
	}
	b.Release()
	rows := exec.NewRowBatch(schema, []exec.Row{{int64(7), "x", nil}})
	if _, err := exec.Dispatch(ctx, op, true, 0, rows, nil); err != nil {
		t.Fatal(err)
	}
	if err := op.Finish(ctx, 0, nil); err != nil {
		t.Fatal(err)
	}
	want := "job> +I[0, n0, true]\njob> +I[1, null, false]\njob> +I[7, x, null]\n"
	if buf.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestBlackholeCountsWithoutMaterialising(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tbl, err := sinks.NewBlackholeTable(map[string]string{"connector": "blackhole"}, schema)
	if err != nil {
		t.Fatal(err)
	}
	op, _ := tbl.OpenSink(connectors.SinkSpec{})
	bh := op.(*sinks.Blackhole)
	before := exec.Global.BatchesMaterialized.Load()
	for _, columnarOn := range []bool{true, false} {
		b := columnar(mem, 100)
		if _, err := exec.Dispatch(context.Background(), op, columnarOn, 0, b, nil); err != nil {
			t.Fatal(err)
		}
		if b.Materialized() {
			t.Fatalf("columnar=%v: the blackhole materialised the batch", columnarOn)
		}
		b.Release()
	}
	if bh.Rows() != 200 || bh.Batches() != 2 {
		t.Fatalf("counted %d rows / %d batches", bh.Rows(), bh.Batches())
	}
	if d := exec.Global.BatchesMaterialized.Load() - before; d != 0 {
		t.Fatalf("%d materialisations", d)
	}
	if _, err := tbl.Open(connectors.ScanSpec{}); err == nil {
		t.Fatal("a blackhole table must refuse scans")
	}
}

// Through the engine: INSERT INTO a blackhole from a columnar source never
// materialises.
func TestBlackholeInsertThroughEngine(t *testing.T) {
	s := engine.NewSession(engine.SessionOptions{NoDemoCatalog: true})
	defer s.Close()
	ctx := context.Background()
	for _, stmt := range []string{
		"CREATE TABLE gen WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '50000')",
		"CREATE TABLE bh (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR) WITH ('connector' = 'blackhole')",
	} {
		if _, err := s.Execute(ctx, stmt, nil, engine.ExecOptions{}); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	before := exec.Global.BatchesMaterialized.Load()
	out, err := s.Execute(ctx, "INSERT INTO bh SELECT * FROM gen", nil, engine.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Message, "46000 row(s)") {
		t.Fatalf("message %q", out.Message)
	}
	if d := exec.Global.BatchesMaterialized.Load() - before; d != 0 {
		t.Fatalf("%d batches materialised on the way to the blackhole", d)
	}
}
