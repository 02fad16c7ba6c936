package jsonfmt

import (
	"errors"
	"reflect"
	"strings"
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

// Records whose unread fields (skipped by skipString and the number
// scanners) are tricky or malformed, each between two good records: the
// columnar walk must keep and reject exactly what the row decode does,
// with the same values, and with on-error = fail the same error.
func TestColumnarAndRowAgreeOnSkippedFields(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "price", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	long := strings.Repeat("x", 29) // puts what follows on a word boundary of the 32-byte turn
	unread := []string{
		`"plain"`, `"` + long + `\""`, `"` + long + `\\"`, `"` + long + `\\\""`, `"a\u00e9b"`, `"\ud83d\ude00"`,
		`"\ud83d"`, "\"\xff\xfe\"", `"日本語"`, `"#"`, `"]"`, `"\"#"`, `""`, `"` + long + long + `"`,
		"\"tab\there\"", "\"nl\nhere\"", "\"nul\x00\"", `"bad \x escape"`, `"bad \u12 escape"`, `"cut \`,
		`"unterminated`, `"` + long + `\`, `0`, `-0`, `-`, `01`, `1.`, `1.5e`, `1e+9`, `-12.5E-3`, `12345678901234567890`,
		`+1`, `.5`, `{"a":[1,"\"",{"b":null}]}`, `[1,2,`, `{"a":"b"`, `tru`, `true`, `nul`, `null`,
	}
	// Each record follows one of the same shape with a plain value, so
	// that the key's positional hint matches and the unread value takes
	// the walk's fast skip.
	shapes := []func(v string) string{
		func(v string) string { return `{"price":3,"url":` + v + `,"s":"ok"}` },
		func(v string) string { return `{"s":"last","extra":` + v + `}` }, // the unread value ends the record
		func(v string) string { return `{"extra":` + v + `,"price":-4}` },
		func(v string) string { return `{"price":7,"extra":` + v }, // no closing brace
	}
	check := func(batch []string, skip bool) {
		t.Helper()
		col := newDec(t, mem, schema, Options{SkipErrors: skip})
		row := newDec(t, mem, schema, Options{SkipErrors: skip, RowOnly: true})
		cres, cerr := col.Decode(lines(batch...))
		rres, rerr := row.Decode(lines(batch...))
		if (cerr == nil) != (rerr == nil) || (cerr != nil && cerr.Error() != rerr.Error()) {
			t.Fatalf("%q: errors %v vs %v", batch, cerr, rerr)
		}
		if cerr != nil {
			var ce, re *RecordError
			if !errors.As(cerr, &ce) || !errors.As(rerr, &re) || ce.Index != re.Index || ce.Reason != re.Reason {
				t.Fatalf("%q: errors %#v vs %#v", batch, cerr, rerr)
			}
			return
		}
		if !reflect.DeepEqual(cres.Kept, rres.Kept) {
			t.Fatalf("%q: kept %v vs %v", batch, cres.Kept, rres.Kept)
		}
		if got, want := rowsOf(cres), rowsOf(rres); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\ncolumnar %#v\nrow      %#v", batch, got, want)
		}
	}
	var all []string
	for _, shape := range shapes {
		for _, v := range unread {
			batch := []string{shape(`"plain"`), shape(v), shape(`"plain"`)}
			for _, skip := range []bool{true, false} {
				check(batch, skip)
			}
			all = append(all, batch...)
		}
	}
	check(all, true)
}
