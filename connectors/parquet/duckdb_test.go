package parquet

import (
	"encoding/csv"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/clink-sql/clink/connectors"
)

// TestDuckDBTypes reads a file written by DuckDB 1.5 (duckdb_types.sql,
// every supported type, nulls, dictionary pages, snappy, data page v1) and
// compares each cell with DuckDB's own rendering of the same query,
// duckdb_types.csv (every column cast to VARCHAR by DuckDB).
func TestDuckDBTypes(t *testing.T) {
	for _, bs := range []int{1, 7, 100, 8192} {
		t.Run(fmt.Sprint("batch", bs), func(t *testing.T) {
			mem := checkedMem(t)
			defer mem.AssertSize(t, 0)
			c, _ := scan(t, mem, fixtures+"duckdb_types.parquet", nil, connectors.ScanSpec{BatchSize: bs})
			defer c.release()
			schema := c.batches[0].Schema()
			want := readCSV(t, fixtures+"duckdb_types.csv")
			header, want := want[0], want[1:]
			for i, f := range schema.Fields() {
				if f.Name != header[i] {
					t.Fatalf("column %d: name %q, DuckDB %q", i, f.Name, header[i])
				}
			}
			rows := c.rows()
			if len(rows) != len(want) {
				t.Fatalf("%d rows, DuckDB %d", len(rows), len(want))
			}
			for r := range rows {
				for col, f := range schema.Fields() {
					if err := matchText(rows[r][col], f.Type, want[r][col]); err != nil {
						t.Fatalf("row %d column %s: %v", r, f.Name, err)
					}
				}
			}
		})
	}
}

func TestDuckDBSchema(t *testing.T) {
	tbl, err := Open(fixtures+"duckdb_types.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"id": "int32", "b": "bool", "i8": "int32", "i16": "int32", "i32": "int32", "i64": "int64",
		"u32": "int64", "f32": "float32", "f64": "float64", "s": "utf8", "cat": "utf8", "bin": "binary",
		"d4": "decimal(4, 1)", "d18": "decimal(18, 3)", "d38": "decimal(38, 10)",
		"ts": "timestamp[us]", "ts_ms": "timestamp[ms]", "ts_ns": "timestamp[ns]", "dt": "date32",
	}
	for _, f := range tbl.Schema().Fields() {
		if got := f.Type.String(); got != want[f.Name] {
			t.Errorf("column %s: type %s, want %s", f.Name, got, want[f.Name])
		}
		if !f.Nullable {
			t.Errorf("column %s: not nullable", f.Name)
		}
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// matchText checks a row-form value against DuckDB's VARCHAR rendering
// ("" for NULL: the fixtures hold no empty strings).
func matchText(v any, typ arrow.DataType, text string) error {
	if v == nil || text == "" {
		if v == nil && text == "" {
			return nil
		}
		return fmt.Errorf("got %v, DuckDB %q", v, text)
	}
	bad := func() error { return fmt.Errorf("got %v (%T), DuckDB %q", v, v, text) }
	switch x := v.(type) {
	case bool:
		if strconv.FormatBool(x) != text {
			return bad()
		}
	case int32:
		if strconv.Itoa(int(x)) != text {
			return bad()
		}
	case int64:
		if strconv.FormatInt(x, 10) != text {
			return bad()
		}
	case float32:
		f, err := strconv.ParseFloat(text, 32)
		if err != nil || float32(f) != x {
			return bad()
		}
	case float64:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || f != x {
			return bad()
		}
	case string:
		if x != text {
			return bad()
		}
	case []byte:
		if string(x) != text {
			return bad()
		}
	case decimal128.Num:
		dt := typ.(*arrow.Decimal128Type)
		n, err := decimal128.FromString(text, dt.Precision, dt.Scale)
		if err != nil || n != x {
			return fmt.Errorf("got %s, DuckDB %q (%v)", x.ToString(dt.Scale), text, err)
		}
	case arrow.Timestamp:
		tt, err := time.Parse("2006-01-02 15:04:05.999999999", text)
		got := x.ToTime(typ.(*arrow.TimestampType).Unit)
		if err != nil || !tt.Equal(got) {
			return fmt.Errorf("got %s, DuckDB %q", got.Format(time.RFC3339Nano), text)
		}
	case arrow.Date32:
		if got := x.ToTime().Format("2006-01-02"); got != text {
			return fmt.Errorf("got %s, DuckDB %q", got, text)
		}
	default:
		return bad()
	}
	return nil
}
