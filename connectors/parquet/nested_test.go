package parquet

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
)

func TestNestedColumn(t *testing.T) {
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "pt", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32}, arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Int32}), Nullable: true},
		{Name: "after", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
	bld := array.NewRecordBuilder(mem, schema)
	for i := 0; i < 10; i++ {
		bld.Field(0).(*array.Int64Builder).Append(int64(i))
		lb := bld.Field(1).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.StringBuilder).Append("a")
		sb := bld.Field(2).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(i))
		sb.FieldBuilder(1).(*array.Int32Builder).Append(int32(-i))
		bld.Field(3).(*array.Int32Builder).Append(int32(100 + i))
	}
	rec := bld.NewRecordBatch()
	bld.Release()
	path := filepath.Join(t.TempDir(), "nested.parquet")
	writeArrowFixture(t, path, rec, 10)
	rec.Release()

	_, err := Open(path, nil)
	if err == nil || !strings.Contains(err.Error(), "column tags: nested type not supported yet") || !strings.Contains(err.Error(), "nested.parquet") {
		t.Fatalf("error %v", err)
	}
	// The flat columns are readable when only they are declared, including
	// one after the nested ones (its column chunk index skips their leaves).
	decl := arrow.NewSchema([]arrow.Field{
		{Name: "after", Type: arrow.PrimitiveTypes.Int32},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	cm := checkedMem(t)
	defer cm.AssertSize(t, 0)
	c, _ := scan(t, cm, path, decl, connectors.ScanSpec{})
	defer c.release()
	for i, r := range c.rows() {
		if r[0] != int32(100+i) || r[1] != int64(i) {
			t.Fatalf("row %d: %v", i, r)
		}
	}
	decl = arrow.NewSchema([]arrow.Field{{Name: "pt", Type: arrow.PrimitiveTypes.Int64}}, nil)
	if _, err := Open(path, decl); err == nil || !strings.Contains(err.Error(), "column pt: nested type not supported yet") {
		t.Fatalf("declared nested column: %v", err)
	}
}

// Random byte damage to uncompressed-looking regions of a file: every scan
// must end with nil or an error naming the file, never a panic, and must
// free what it allocated.
func TestDamagedFiles(t *testing.T) {
	for _, fixture := range []string{"duckdb_types.parquet", "arrow_types.parquet", "duckdb_groups.parquet"} {
		whole, err := os.ReadFile(fixtures + fixture)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewSource(1))
		dir := t.TempDir()
		for trial := 0; trial < 30; trial++ {
			bad := append([]byte(nil), whole...)
			for k := 0; k < 1+trial%5; k++ {
				bad[4+rng.Intn(len(bad)/2)] = byte(rng.Intn(256))
			}
			path := filepath.Join(dir, "damaged.parquet")
			os.WriteFile(path, bad, 0o644)
			tbl, err := Open(path, nil)
			if err != nil {
				if !strings.Contains(err.Error(), "damaged.parquet") {
					t.Fatalf("open error %v does not name the file", err)
				}
				continue
			}
			mem := checkedMem(t)
			tbl.WithAllocator(mem)
			src, _ := tbl.NewSource(connectors.ScanSpec{BatchSize: 100})
			c := &collector{}
			err = src.Run(context.Background(), c)
			c.release()
			if err != nil && !strings.Contains(err.Error(), "damaged.parquet") {
				t.Fatalf("%s trial %d: error %v does not name the file", fixture, trial, err)
			}
			mem.AssertSize(t, 0)
		}
	}
}
