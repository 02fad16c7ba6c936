package csvfile

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

type collect struct{ rows []exec.Row }

func (c *collect) Emit(_ context.Context, b *exec.Batch) error {
	if !b.IsColumnar() {
		panic("csv emits columnar batches")
	}
	c.rows = append(c.rows, exec.DecodeRows(b.Record())...)
	return nil
}
func (c *collect) EmitWatermark(context.Context, int64) error { return nil }

// Typed columns, a chosen delimiter and NULL literal, a projection, and a
// glob that skips hidden and in-progress files.
func TestCSVTable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.csv", "1;x;1.5\n2;N;2.5\n")
	write("b.csv", "3;z;N\n")
	write(".hidden.csv", "9;h;9\n")
	write("_inprogress.csv", "8;p;8\n")
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	tbl, err := NewTable(map[string]string{"connector": "filesystem", "format": "csv", "path": filepath.Join(dir, "*.csv"),
		"csv.field-delimiter": ";", "csv.null-literal": "N"}, schema)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tbl.mem = mem
	src, err := tbl.Open(connectors.ScanSpec{Columns: []int{2, 0, 1}, BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	out := &collect{}
	if err := src.Run(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	want := []exec.Row{{1.5, int64(1), "x"}, {2.5, int64(2), nil}, {nil, int64(3), "z"}}
	if !reflect.DeepEqual(out.rows, want) {
		t.Errorf("got %v, want %v", out.rows, want)
	}
	if _, err := NewTable(map[string]string{"path": filepath.Join(dir, "a.csv"), "csv.quote": "'"}, schema); err == nil {
		t.Error("an unknown option was accepted")
	}
	if _, err := NewTable(map[string]string{"path": filepath.Join(dir, "none*.csv")}, schema); err == nil {
		t.Error("a glob matching nothing was accepted")
	}
}
