package jsonfmt

import (
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// unreadCase is one declared column with a value valid for its type and
// one the building decode rejects.
type unreadCase struct {
	field     arrow.Field
	good, bad string
}

var unreadCases = []unreadCase{
	{arrow.Field{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}, `true`, `12`},
	{arrow.Field{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, `5`, `3000000000`},
	{arrow.Field{Name: "l", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, `7`, `1.5`},
	{arrow.Field{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true}, `1.5`, `1e39`},
	{arrow.Field{Name: "d", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, `2.5`, `"abc"`},
	{arrow.Field{Name: "dec", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true}, `12.34`, `true`},
	{arrow.Field{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true}, `"aGk="`, `"!!!"`},
	{arrow.Field{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true}, `"2024-01-02 03:04:05"`, `"yesterday"`},
	{arrow.Field{Name: "dt", Type: arrow.FixedWidthTypes.Date32, Nullable: true}, `"2024-01-02"`, `"2024-13-45"`},
	{arrow.Field{Name: "r", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), Nullable: true}, `{"x": 1}`, `{"x": "no"}`},
	{arrow.Field{Name: "a", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true}, `[1, 2]`, `[1, "no"]`},
	// VARCHAR takes any JSON value (as its text): only the syntax can be bad.
	{arrow.Field{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}, `"hi"`, `"unterminated`},
}

// unreadSchema declares k BIGINT, the column the tests read, and every case.
func unreadSchema() *arrow.Schema {
	fs := []arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}
	for _, c := range unreadCases {
		fs = append(fs, c.field)
	}
	return arrow.NewSchema(fs, nil)
}

func projected(t *testing.T, mem memory.Allocator, cols []int, opts Options) *Decoder {
	t.Helper()
	d, err := NewProjectedDecoder(mem, unreadSchema(), cols, opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestUnreadFieldJudged: a record whose only bad value is in a column the
// query does not read is skipped (skip) or fails naming the column (fail),
// on the columnar walk and the row decode; the same record with a good
// value is kept, and on the walk without falling back.
func TestUnreadFieldJudged(t *testing.T) {
	for _, rowOnly := range []bool{false, true} {
		for _, c := range unreadCases {
			t.Run(fmt.Sprintf("%s/rowonly=%v", c.field.Name, rowOnly), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				good := fmt.Sprintf(`{"k": 1, %q: %s}`, c.field.Name, c.good)
				bad := fmt.Sprintf(`{"k": 2, %q: %s}`, c.field.Name, c.bad)

				d := projected(t, mem, []int{0}, Options{SkipErrors: true, RowOnly: rowOnly})
				res, err := d.Decode(lines(good, bad, good))
				if err != nil {
					t.Fatal(err)
				}
				rows := rowsOf(res)
				if len(rows) != 2 || rows[0][0] != int64(1) || rows[1][0] != int64(1) {
					t.Fatalf("skip: got rows %v, want the two good records (k = 1)", rows)
				}
				if fmt.Sprint(res.Kept) != "[0 2]" {
					t.Fatalf("kept %v, want [0 2]", res.Kept)
				}
				if s := d.Stats(); !rowOnly && s.Fallbacks != 0 {
					t.Fatalf("good records with an unread field fell back to rows: %+v", s)
				}

				d = projected(t, mem, []int{0}, Options{RowOnly: rowOnly})
				_, err = d.Decode(lines(good, bad))
				var re *RecordError
				if !errors.As(err, &re) || re.Index != 1 {
					t.Fatalf("fail: want a RecordError for record 1, got %v", err)
				}
				if c.field.Name != "s" && (re.Column != c.field.Name && re.Column != c.field.Name+".x" && re.Column != c.field.Name+"[1]") {
					t.Fatalf("fail: error names column %q (%v), want %s", re.Column, err, c.field.Name)
				}
			})
		}
	}
}

// TestUnreadAgreesWithFull: over records with good and bad values in every
// column, a decoder reading one column keeps exactly the records a decoder
// reading all of them keeps (the full decode is the independent judge).
func TestUnreadAgreesWithFull(t *testing.T) {
	var recs []string
	for i, c := range unreadCases {
		recs = append(recs,
			fmt.Sprintf(`{"k": %d, %q: %s}`, 2*i, c.field.Name, c.good),
			fmt.Sprintf(`{"k": %d, %q: %s}`, 2*i+1, c.field.Name, c.bad),
			fmt.Sprintf(`{%q: %s, "k": %d}`, c.field.Name, c.bad, 100+i)) // another key order
	}
	recs = append(recs, `{"k": 500, "l": 1, "l": 1.5}`, `{"k": 501, "l": 1.5, "l": 1}`, `{"k": 502, "zz": "x"}`, `{"k": 503, "l": null}`)
	all := make([]int, len(unreadCases)+1)
	for i := range all {
		all[i] = i
	}
	for _, rowOnly := range []bool{false, true} {
		for _, failMissing := range []bool{false, true} {
			opts := Options{SkipErrors: true, RowOnly: rowOnly, FailOnMissing: failMissing}
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			full := projected(t, mem, all, opts)
			fres, err := full.Decode(lines(recs...))
			if err != nil {
				t.Fatal(err)
			}
			fullRows := rowsOf(fres)
			for col := range all {
				d := projected(t, mem, []int{col}, opts)
				res, err := d.Decode(lines(recs...))
				if err != nil {
					t.Fatal(err)
				}
				rows := rowsOf(res)
				if fmt.Sprint(res.Kept) != fmt.Sprint(fres.Kept) || len(rows) != len(fullRows) {
					t.Fatalf("rowonly=%v failmissing=%v reading column %d: kept %v, the full decode kept %v",
						rowOnly, failMissing, col, res.Kept, fres.Kept)
				}
				for r := range rows {
					if fmt.Sprint(rows[r][0]) != fmt.Sprint(fullRows[r][col]) {
						t.Fatalf("column %d row %d: %v, full decode %v", col, r, rows[r][0], fullRows[r][col])
					}
				}
			}
			if failMissing && len(fullRows) != 0 {
				t.Fatalf("fail-on-missing: every record misses a field, yet %d kept", len(fullRows))
			}
			mem.AssertSize(t, 0)
		}
	}
}
