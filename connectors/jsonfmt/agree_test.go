package jsonfmt

import (
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Tricky records, each alone and all together: the columnar walk (with its
// fallback) and the row decode must agree on every value and on which
// records are bad.
func TestColumnarAndRowAgreeOnTrickyRecords(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "l", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "a", Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true})), Nullable: true},
	}, nil)
	recs := []string{
		`{"l":-0}`, `{"l":-}`, `{"l":01}`, `{"l":123456789012345678}`, `{"l":9223372036854775807}`,
		`{"l":9223372036854775808}`, `{"l":-9223372036854775808}`, `{"l":-9223372036854775809}`,
		`{"l":1.5}`, `{"l":1e3}`, `{"l":"42"}`, `{"l":" 42 "}`, `{"l":true}`, `{"l":null}`,
		`{"i":2147483648}`, `{"i":-2147483648}`, `{"f":3.4e39}`, `{"f":16777217}`, `{"f":0.1}`, `{"f":"Infinity"}`,
		`{"s":"\ud83d\ude00"}`, `{"s":"\ud83d"}`, "{\"s\":\"\xff\"}", `{"s":12.50}`, `{"s":[1, {"a" : 2}]}`,
		`{"s":"a\u0000b"}`, "{\"s\":\"tab\there\"}", `{"t":"2020-02-30 00:00:00"}`, `{"t":"2020-01-01T10:00:00+02:00"}`,
		`{"t":"2020-01-01 10:00:00.1234567"}`, `{"t":1577836800}`, `{"a":[{"x":1},{"x":null},null,{}]}`,
		`{"a":[{"x":1,"x":2}]}`, `{"a":{"x":1}}`, `{"l":1,}`, `{"l":1 "i":2}`, `{"\u006c":5}`, `{"L":5}`,
		`{}`, `{"unknown":{"deep":[[[]]]},"l":7}`, `{"unknown":[1,2,}`, ` `, `{"l":1}{"l":2}`, `"str"`, `null`,
	}
	all := lines(recs...)
	col := newDec(t, mem, schema, Options{SkipErrors: true})
	row := newDec(t, mem, schema, Options{SkipErrors: true, RowOnly: true})
	check := func(batch [][]byte) {
		t.Helper()
		cres, err := col.Decode(batch)
		if err != nil {
			t.Fatal(err)
		}
		rres, err := row.Decode(batch)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(cres.Kept, rres.Kept) {
			t.Fatalf("%q: kept %v vs %v", batch, cres.Kept, rres.Kept)
		}
		if got, want := rowsOf(cres), rowsOf(rres); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\ncolumnar %#v\nrow      %#v", batch, got, want)
		}
	}
	for _, r := range all {
		check([][]byte{r, []byte(`{"l":1}`)})
	}
	check(all)
}
