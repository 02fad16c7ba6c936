package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/clink-sql/clink/exec"
)

// Fixture tables for the SQL suites, written with arrow-go's own Parquet
// writer (another writer than the one clink reads with). Small and written
// out by hand so that expected results can be checked by reading them.

var peopleSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "age", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "city", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "balance", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
	{Name: "joined", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
	{Name: "active", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
}, nil)

func dec(v int64) decimal128.Num { return decimal128.FromI64(v) }

func ts(s string) arrow.Timestamp {
	t, err := arrow.TimestampFromString(s, arrow.Millisecond)
	if err != nil {
		panic(err)
	}
	return t
}

var peopleRows = []exec.Row{
	{int64(1), "Alice", int32(34), "Berlin", 88.5, dec(123450), ts("2020-01-15 10:00:00"), true},
	{int64(2), "Bob", int32(27), "Paris", 72.25, dec(-5000), ts("2021-03-01 08:30:00.250"), false},
	{int64(3), "Carol", nil, "Berlin", nil, dec(99), ts("2019-07-04 00:00:00"), true},
	{int64(4), "Dave", int32(45), nil, 91.0, nil, nil, nil},
	{int64(5), nil, int32(19), "Rome", 55.5, dec(0), ts("2022-12-31 23:59:59.999"), false},
	{int64(6), "Eve", int32(34), "Paris", 60.0, dec(250000), ts("2020-06-30 12:00:00"), true},
	{int64(7), "Frank", int32(52), "Berlin", 77.75, dec(1), ts("2018-02-28 18:45:00"), true},
	{int64(8), "grace", int32(27), "rome", 99.5, dec(-1), ts("2023-05-05 05:05:05"), nil},
}

var ordersSchema = arrow.NewSchema([]arrow.Field{
	{Name: "order_id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "person_id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "item", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "qty", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "price", Type: &arrow.Decimal128Type{Precision: 8, Scale: 2}, Nullable: true},
}, nil)

var ordersRows = []exec.Row{
	{int64(100), int64(1), "apple", int32(3), dec(150)},
	{int64(101), int64(1), "pear", int32(1), dec(275)},
	{int64(102), int64(2), "apple", int32(10), dec(150)},
	{int64(103), int64(4), "fig", nil, dec(1000)},
	{int64(104), nil, "apple", int32(2), dec(150)},
	{int64(105), int64(99), "kiwi", int32(5), nil},
	{int64(106), int64(6), "pear", int32(2), dec(275)},
	{int64(107), int64(1), nil, int32(1), dec(5)},
}

// eventsSchema and eventsRows are an event-time table for the window suite
// (70_windows.slt): in time order except b at 11s after a at 12s, within
// the 5s watermark delay the suite declares.
var eventsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
	{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

var eventsRows = []exec.Row{
	{"a", ts("2024-01-01 00:00:01"), int64(1)},
	{"b", ts("2024-01-01 00:00:03"), int64(2)},
	{"a", ts("2024-01-01 00:00:09"), int64(3)},
	{"a", ts("2024-01-01 00:00:12"), int64(4)},
	{"b", ts("2024-01-01 00:00:11"), int64(5)},
	{"a", ts("2024-01-01 00:00:25"), int64(6)},
	{"b", ts("2024-01-01 00:00:27"), int64(7)},
	{"a", ts("2024-01-01 00:00:28"), int64(8)},
	{"b", ts("2024-01-01 00:00:41"), int64(9)},
}

func writeFixtures(t testing.TB, dir string) {
	writeParquet(t, filepath.Join(dir, "events.parquet"), eventsSchema, eventsRows, 3)
	writeParquet(t, filepath.Join(dir, "people.parquet"), peopleSchema, peopleRows, 3)
	writeParquet(t, filepath.Join(dir, "orders.parquet"), ordersSchema, ordersRows, 4)
	// A directory of two files with the same schema, for directory and glob reads.
	if err := os.MkdirAll(filepath.Join(dir, "parts"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeParquet(t, filepath.Join(dir, "parts", "a.parquet"), ordersSchema, ordersRows[:4], 2)
	writeParquet(t, filepath.Join(dir, "parts", "b.parquet"), ordersSchema, ordersRows[4:], 2)
}

// writeParquet writes rows with row groups of rowGroup rows, dictionary
// encoding on, and any further writer properties.
func writeParquet(t testing.TB, path string, schema *arrow.Schema, rows []exec.Row, rowGroup int64, more ...parquet.WriterProperty) {
	rec, err := exec.EncodeRows(memory.DefaultAllocator, schema, rows)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	props := parquet.NewWriterProperties(append([]parquet.WriterProperty{parquet.WithMaxRowGroupLength(rowGroup),
		parquet.WithDictionaryDefault(true)}, more...)...)
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
