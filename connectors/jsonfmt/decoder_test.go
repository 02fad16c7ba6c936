package jsonfmt

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

func lines(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, x := range s {
		out[i] = []byte(x)
	}
	return out
}

func newDec(t *testing.T, mem memory.Allocator, schema *arrow.Schema, opts Options) *Decoder {
	t.Helper()
	d, err := NewDecoder(mem, schema, opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// rowsOf returns a result's rows (decoding a columnar result) and releases it.
func rowsOf(res Result) []exec.Row {
	if res.Rec != nil {
		defer res.Rec.Release()
		return exec.DecodeRows(res.Rec)
	}
	return res.Rows
}

var allTypes = arrow.NewSchema([]arrow.Field{
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "l", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "d", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "dec", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "ts3", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
	{Name: "ts6", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "r", Type: arrow.StructOf(
		arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
	{Name: "arr", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
}, nil)

var allTypesLines = []string{
	`{"b":true,"i":7,"l":-9007199254740993,"f":1.5,"d":2.25e3,"dec":12345678.905,"s":"h\u00e9\"llo\n","bin":"AQID","ts3":"2015-07-15 00:00:01.123","ts6":"2015-07-15T00:00:01.123456Z","day":"2024-02-29","r":{"x":1,"y":"a"},"arr":[1,null,3]}`,
	`{"b":false,"i":-2147483648,"l":0,"f":-0.1,"d":1e-300,"dec":-0.004,"s":"","bin":"","ts3":"2015-07-15T00:00:01","ts6":"2015-07-15 00:00:01.5","day":"1969-12-31","r":{"y":null},"arr":[]}`,
	`{"r":null,"arr":null,"unknown":{"deep":[1,{"z":"q"}]},"s":"日本"}`,
	`  {"l":9223372036854775807 , "d":-0.0}  `,
}

func TestColumnarMatchesRowDecodeAllTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	col := newDec(t, mem, allTypes, Options{})
	row := newDec(t, mem, allTypes, Options{RowOnly: true})
	for _, batch := range [][]string{allTypesLines, allTypesLines[:1], allTypesLines[2:]} {
		cres, err := col.Decode(lines(batch...))
		if err != nil {
			t.Fatal(err)
		}
		if cres.Rec == nil {
			t.Fatalf("batch fell back to rows; stats %v", col.Stats())
		}
		rres, err := row.Decode(lines(batch...))
		if err != nil {
			t.Fatal(err)
		}
		if rres.Rec != nil {
			t.Fatal("row-only decoder produced a columnar batch")
		}
		got, want := rowsOf(cres), rowsOf(rres)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("columnar and row decode differ:\n got %#v\nwant %#v", got, want)
		}
	}
	// Spot-check exact values.
	res, _ := col.Decode(lines(allTypesLines[0]))
	r := rowsOf(res)[0]
	if r[2] != int64(-9007199254740993) {
		t.Errorf("BIGINT beyond float precision: got %v", r[2])
	}
	if want := decimal128.FromI64(1234567891); r[5] != want {
		t.Errorf("DECIMAL(10,2) of 12345678.905: got %v want %v (half-up, exact)", r[5], want)
	}
	if r[6] != "hé\"llo\n" {
		t.Errorf("escaped string: got %q", r[6])
	}
	if r[8] != arrow.Timestamp(1436918401123) || r[9] != arrow.Timestamp(1436918401123456) {
		t.Errorf("timestamps: got %v %v", r[8], r[9])
	}
	if !reflect.DeepEqual(r[11], exec.Row{int64(1), "a"}) || !reflect.DeepEqual(r[12], []any{int64(1), nil, int64(3)}) {
		t.Errorf("nested: got %v %v", r[11], r[12])
	}
	if s := col.Stats(); s.Fallbacks != 0 || s.ColumnarBatches != 4 {
		t.Errorf("stats: %+v", s)
	}
}

// Two same-typed fields swapped between records: only the name check keeps
// the values in their columns (a type check cannot catch a mis-filing).
func TestReorderedSameTypedFieldsLandInTheRightColumns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	// Short records take the byte-compare path of the key check, long ones
	// (16+ bytes after the key) the word-compare path: both must verify.
	for _, pad := range []string{"", `,"pad":"0123456789abcdef0123456789"`} {
		d := newDec(t, mem, schema, Options{})
		res, err := d.Decode(lines(`{"a":1,"b":2`+pad+`}`, `{"b":20,"a":10`+pad+`}`, `{"a":100,"b":200`+pad+`}`, `{"b":2000`+pad+`}`))
		if err != nil {
			t.Fatal(err)
		}
		if res.Rec == nil {
			t.Fatal("expected a columnar batch")
		}
		got := rowsOf(res)
		want := []exec.Row{{int64(1), int64(2)}, {int64(10), int64(20)}, {int64(100), int64(200)}, {nil, int64(2000)}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("pad %q: got %v want %v", pad, got, want)
		}
	}
}

// Names longer than the key check's two words that share their first
// sixteen bytes: the words match, the rest of the name decides.
func TestReorderedLongNamesLandInTheRightColumns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const a, b = "a_very_long_common_prefix_a", "a_very_long_common_prefix_b"
	schema := arrow.NewSchema([]arrow.Field{
		{Name: a, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: b, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	d := newDec(t, mem, schema, Options{})
	f := func(k1 string, v1 int, k2 string, v2 int) string {
		return fmt.Sprintf(`{"%s":%d,"%s":%d,"pad":"0123456789abcdef0123456789"}`, k1, v1, k2, v2)
	}
	res, err := d.Decode(lines(f(a, 1, b, 2), f(b, 20, a, 10), f(a, 100, b, 200), f(b, 2000, "a_very_long_common_prefix_c", 7)))
	if err != nil {
		t.Fatal(err)
	}
	if res.Rec == nil {
		t.Fatal("expected a columnar batch")
	}
	got := rowsOf(res)
	want := []exec.Row{{int64(1), int64(2)}, {int64(10), int64(20)}, {int64(100), int64(200)}, {nil, int64(2000)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
}

func TestFallbackToRowDecode(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	d := newDec(t, mem, schema, Options{})
	before := exec.Global.DecodeFallbacks.Load()
	// A quoted number and a non-string into VARCHAR are valid for the row
	// decode (Flink's leniency) but not decided by the walk.
	res, err := d.Decode(lines(`{"n":1,"s":"x"}`, `{"n":"2","s":{"k":[1, 2]}}`, `{"n":3,"s":"z","s2":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Rec != nil {
		res.Rec.Release()
		t.Fatal("expected a row fallback")
	}
	want := []exec.Row{{int64(1), "x"}, {int64(2), `{"k":[1,2]}`}, {int64(3), "z"}}
	if !reflect.DeepEqual(res.Rows, want) {
		t.Fatalf("got %v want %v", res.Rows, want)
	}
	if s := d.Stats(); s.Fallbacks != 1 || s.RowBatches != 1 {
		t.Errorf("stats %+v", s)
	}
	if exec.Global.DecodeFallbacks.Load() != before+1 {
		t.Error("global DecodeFallbacks not incremented")
	}
	// Duplicate keys: encoding/json keeps the last; the walk refuses.
	res, err = d.Decode(lines(`{"n":1,"n":5}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := rowsOf(res); !reflect.DeepEqual(got, []exec.Row{{int64(5), nil}}) {
		t.Fatalf("duplicate key: got %v", got)
	}
}

func TestDamperBacksOffAndProbes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	d := newDec(t, mem, schema, Options{})
	bad := lines(`{"n":"1"}`)
	for i := 0; i < 8; i++ {
		res, err := d.Decode(bad)
		if err != nil || res.Rec != nil {
			t.Fatal("want row fallback", err)
		}
	}
	s := d.Stats()
	if s.Fallbacks != 8 || !s.DamperBackedOff {
		t.Fatalf("after 8 fallbacks: %+v", s)
	}
	// Backed off: the next 63 batches go straight to rows, even good ones.
	good := lines(`{"n":1}`)
	for i := 0; i < 63; i++ {
		res, err := d.Decode(good)
		if err != nil || res.Rec != nil {
			t.Fatalf("batch %d: want rows while backed off", i)
		}
	}
	if s := d.Stats(); s.DamperSkips != 63 || s.Fallbacks != 8 {
		t.Fatalf("while backed off: %+v", s)
	}
	// The 64th is a probe; it succeeds and reopens the damper.
	res, err := d.Decode(good)
	if err != nil || res.Rec == nil {
		t.Fatal("64th batch should probe columnar and succeed")
	}
	res.Rec.Release()
	if d.Stats().DamperBackedOff {
		t.Fatal("a successful probe should reopen the damper")
	}
}

func TestBadRecordsFailAndSkip(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "r", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
	}, nil)
	good := []string{`{"n":1,"r":{"x":"a"}}`, `{"n":2}`, `{"n":3,"r":{"x":"c"}}`, `{"n":4}`}
	mixed := []string{good[0], `{"n":1`, good[1], `{"n":"x"}`, good[2], `[1,2]`, `{"n":5,"r":{"x":"q"}} trailing`, good[3]}
	want := []exec.Row{{int64(1), exec.Row{"a"}}, {int64(2), nil}, {int64(3), exec.Row{"c"}}, {int64(4), nil}}
	wantKept := []int{0, 2, 4, 7}
	for _, path := range []string{"columnar", "fallback", "row-only"} {
		t.Run(path, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			recs := append([]string(nil), mixed...)
			wantRows := append([]exec.Row(nil), want...)
			kept := append([]int(nil), wantKept...)
			opts := Options{SkipErrors: true, RowOnly: path == "row-only"}
			if path == "fallback" {
				// A good record the walk does not decide (quoted number)
				// sends the batch to the row decode.
				recs = append(recs, `{"n":"6"}`)
				wantRows = append(wantRows, exec.Row{int64(6), nil})
				kept = append(kept, len(recs)-1)
			}
			d := newDec(t, mem, schema, opts)
			skippedBefore := exec.Global.SkippedRecords.Load()
			res, err := d.Decode(lines(recs...))
			if err != nil {
				t.Fatal(err)
			}
			if (res.Rec != nil) != (path == "columnar") {
				t.Fatalf("columnar=%v on the %s path", res.Rec != nil, path)
			}
			if !reflect.DeepEqual(res.Kept, kept) {
				t.Errorf("kept %v want %v", res.Kept, kept)
			}
			if got := rowsOf(res); !reflect.DeepEqual(got, wantRows) {
				t.Fatalf("got %v\nwant %v", got, wantRows)
			}
			s := d.Stats()
			wantSkipped := map[string]int64{ReasonMalformed: 2, ReasonType: 1, ReasonNotObject: 1}
			if !reflect.DeepEqual(s.Skipped, wantSkipped) {
				t.Errorf("skipped %v want %v", s.Skipped, wantSkipped)
			}
			if exec.Global.SkippedRecords.Load()-skippedBefore != 4 {
				t.Error("global SkippedRecords not counted")
			}

			// on-error = fail names the first bad record.
			opts.SkipErrors = false
			d = newDec(t, mem, schema, opts)
			_, err = d.Decode(lines(recs...))
			var re *RecordError
			if !errors.As(err, &re) || re.Index != 1 || re.Reason != ReasonMalformed {
				t.Fatalf("fail mode: got %v (%#v)", err, re)
			}
		})
	}
}

func TestMissingFields(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	d := newDec(t, mem, schema, Options{FailOnMissing: true})
	_, err := d.Decode(lines(`{"a":1,"b":"x"}`, `{"a":2}`))
	var re *RecordError
	if !errors.As(err, &re) || re.Reason != ReasonMissing || re.Index != 1 || !strings.Contains(err.Error(), "'b'") {
		t.Fatalf("got %v", err)
	}
}

func TestParseOptions(t *testing.T) {
	o, err := ParseOptions(map[string]string{"json.ignore-parse-errors": "true", "json.columnar-decode": "false"})
	if err != nil || !o.SkipErrors || !o.RowOnly {
		t.Fatalf("%+v %v", o, err)
	}
	if _, err := ParseOptions(map[string]string{"on-error": "ignore"}); err == nil {
		t.Fatal("want an error for on-error = ignore")
	}
	o, _ = ParseOptions(map[string]string{"on-error": "skip"})
	if !o.SkipErrors {
		t.Fatal("on-error = skip")
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newDec(t, mem, allTypes, Options{})
	res, err := d.Decode(lines(allTypesLines...))
	if err != nil || res.Rec == nil {
		t.Fatal(err)
	}
	defer res.Rec.Release()
	enc := NewEncoder(allTypes)
	var out [][]byte
	for i := 0; i < int(res.Rec.NumRows()); i++ {
		out = append(out, enc.AppendRow(nil, res.Rec, i))
	}
	res2, err := d.Decode(out)
	if err != nil || res2.Rec == nil {
		t.Fatalf("re-decode: %v (%v)", err, d.Stats())
	}
	if got, want := rowsOf(res2), exec.DecodeRows(res.Rec); !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip differs:\n%v\n%v\n%s", got, want, out)
	}
}

func TestParseDecimalExact(t *testing.T) {
	for _, c := range []struct {
		in   string
		p, s int32
		want string
	}{
		{"1.005", 10, 2, "1.01"}, {"-1.005", 10, 2, "-1.01"}, {"1e2", 10, 2, "100.00"},
		{"0.000", 5, 2, "0.00"}, {"99999999.994", 10, 2, "99999999.99"},
		{"12345678901234567890.12", 38, 2, "12345678901234567890.12"},
	} {
		v, err := parseDecimal([]byte(c.in), c.p, c.s)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if got := v.ToString(c.s); got != c.want {
			t.Errorf("%s -> %s want %s", c.in, got, c.want)
		}
	}
	if _, err := parseDecimal([]byte("99999999.995"), 10, 2); err == nil {
		t.Error("rounding past the precision should fail")
	}
	_ = fmt.Sprint
}
