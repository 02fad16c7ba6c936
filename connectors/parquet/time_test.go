package parquet

import (
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// TIME columns of every stored unit read as TIME(p): INT32 TIME(MILLIS)
// as Time32(ms), INT64 TIME(MICROS) and TIME(NANOS) as Time64, row
// values the ticks since midnight (arrow-go's writer; DuckDB's TIME(MICROS)
// files are read by the SQL suite, testdata/sql/85_types_aggs.slt).
func TestTimeColumns(t *testing.T) {
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "ms", Type: arrow.FixedWidthTypes.Time32ms, Nullable: true},
		{Name: "us", Type: arrow.FixedWidthTypes.Time64us, Nullable: true},
		{Name: "ns", Type: arrow.FixedWidthTypes.Time64ns, Nullable: true},
	}, nil)
	var rows []exec.Row
	for i := range 100 {
		r := exec.Row{arrow.Time64(int64(i) * 863999), arrow.Time64(int64(i) * 863999999), arrow.Time64(int64(i)*863999999999 + 7)}
		if i%7 == 3 {
			r[i%3] = nil
		}
		rows = append(rows, r)
	}
	rec, err := exec.EncodeRows(memory.NewGoAllocator(), schema, rows)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "times.parquet")
	writeRecordFile(t, path, rec, pq.NewWriterProperties(pq.WithMaxRowGroupLength(30)), pqarrow.DefaultWriterProps())
	c, src := scan(t, mem, path, nil, connectors.ScanSpec{BatchSize: 16})
	defer c.release()
	for i, f := range schema.Fields() {
		if got := src.Schema().Field(i).Type; !arrow.TypeEqual(got, f.Type) {
			t.Errorf("column %s read as %s, want %s", f.Name, got, f.Type)
		}
	}
	checkRows(t, c.rows(), func(i int) exec.Row { return rows[i] }, len(rows), nil)

	// The statistics skip row groups: times rise with the row, so
	// us > 60 * 863999999 leaves only the groups of rows 60..99.
	c2, src2 := scan(t, mem, path, nil, connectors.ScanSpec{Filters: []connectors.ColumnFilter{
		{Column: 1, Op: ">", Value: arrow.Time64(60 * 863999999)}}})
	defer c2.release()
	if total, skipped := src2.RowGroups(); total != 4 || skipped != 2 {
		t.Errorf("row groups %d of %d skipped, want 2 of 4", skipped, total)
	}
}
