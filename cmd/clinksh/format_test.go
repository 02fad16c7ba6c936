package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

const wantCSV = `b,i32,i64,f32,f64,d,s,bin,ts_ms,ts_us,ts_ns,dt,st,l
true,1,-9007199254740993,1.5,0.1,123.45,"a,b ""c""",\x00ff,2024-01-02 03:04:05.12,2024-01-02 03:04:05.000001,2024-01-02 03:04:05.123456789,2024-01-02,"{a=1, b=x}","[1, 2]"
,,,,,,,,,,,,,
false,-5,0,1e-07,nan,-0.05,"line1
line2	x",\x,2024-01-02 03:04:05,1969-12-31 23:59:59.999999,2024-01-02 03:04:05,1970-01-01,"{a=NULL, b=y}","[NULL, 3]"
,,,,-inf,,"",,,,,,,[]
`

const wantTSV = "b\ti32\ti64\tf32\tf64\td\ts\tbin\tts_ms\tts_us\tts_ns\tdt\tst\tl\n" +
	"true\t1\t-9007199254740993\t1.5\t0.1\t123.45\ta,b \"c\"\t\\x00ff\t2024-01-02 03:04:05.12\t2024-01-02 03:04:05.000001\t2024-01-02 03:04:05.123456789\t2024-01-02\t{a=1, b=x}\t[1, 2]\n" +
	"\t\t\t\t\t\t\t\t\t\t\t\t\t\n" +
	"false\t-5\t0\t1e-07\tnan\t-0.05\tline1\\nline2\\tx\t\\x\t2024-01-02 03:04:05\t1969-12-31 23:59:59.999999\t2024-01-02 03:04:05\t1970-01-01\t{a=NULL, b=y}\t[NULL, 3]\n" +
	"\t\t\t\t-inf\t\t\t\t\t\t\t\t\t[]\n"

var wantObjects = []string{
	`{"b":true,"i32":1,"i64":-9007199254740993,"f32":1.5,"f64":0.1,"d":123.45,"s":"a,b \"c\"","bin":"AP8=","ts_ms":"2024-01-02 03:04:05.12","ts_us":"2024-01-02 03:04:05.000001","ts_ns":"2024-01-02 03:04:05.123456789","dt":"2024-01-02","st":{"a":1,"b":"x"},"l":[1,2]}`,
	`{"b":null,"i32":null,"i64":null,"f32":null,"f64":null,"d":null,"s":null,"bin":null,"ts_ms":null,"ts_us":null,"ts_ns":null,"dt":null,"st":null,"l":null}`,
	`{"b":false,"i32":-5,"i64":0,"f32":1e-07,"f64":"NaN","d":-0.05,"s":"line1\nline2\tx","bin":"","ts_ms":"2024-01-02 03:04:05","ts_us":"1969-12-31 23:59:59.999999","ts_ns":"2024-01-02 03:04:05","dt":"1970-01-01","st":{"a":null,"b":"y"},"l":[null,3]}`,
	`{"b":null,"i32":null,"i64":null,"f32":null,"f64":"-Infinity","d":null,"s":"","bin":null,"ts_ms":null,"ts_us":null,"ts_ns":null,"dt":null,"st":null,"l":[]}`,
}

// render runs one result (of the batches' schema, allTypesSchema when
// there are none) through a sink of format, as the shell does.
func render(t *testing.T, format string, mem memory.Allocator, batches ...*exec.Batch) string {
	t.Helper()
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	s := newSink(format, sinkOptions{out: w, mem: mem})
	schema := allTypesSchema()
	if len(batches) > 0 {
		schema = batches[0].Schema()
	}
	if err := s.Columns(schema, true); err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if err := s.Batch(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.finish(nil); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestFormatsEveryTypeColumnar(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	wantJSON := "[\n" + strings.Join(wantObjects, ",\n") + "\n]\n"
	wantNDJSON := strings.Join(wantObjects, "\n") + "\n"
	for _, tc := range []struct{ format, want string }{
		{formatCSV, wantCSV},
		{formatTSV, wantTSV},
		{formatJSON, wantJSON},
		{formatNDJSON, wantNDJSON},
	} {
		t.Run(tc.format, func(t *testing.T) {
			b := exec.NewColumnarBatch(allTypesRecord(t, mem))
			defer b.Release()
			before := exec.Global.BatchesMaterialized.Load()
			got := render(t, tc.format, mem, b)
			if got != tc.want {
				t.Errorf("%s output:\n%s\nwant:\n%s", tc.format, got, tc.want)
			}
			// Printing must read the Arrow arrays, never decode rows.
			if b.Materialized() {
				t.Errorf("%s: formatting materialised the columnar batch", tc.format)
			}
			if after := exec.Global.BatchesMaterialized.Load(); after != before {
				t.Errorf("%s: BatchesMaterialized went %d -> %d", tc.format, before, after)
			}
		})
	}
}

// A row batch goes through the same formatters (encoded to Arrow once), so
// the two carriers print identically.
func TestFormatsRowBatchSameAsColumnar(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, format := range formatNames {
		rb := exec.NewRowBatch(allTypesSchema(), allTypesRows())
		cb := exec.NewColumnarBatch(allTypesRecord(t, mem))
		gotRows := render(t, format, mem, rb)
		gotCols := render(t, format, mem, cb)
		cb.Release()
		rb.Release()
		if gotRows != gotCols {
			t.Errorf("%s: row batch printed\n%s\ncolumnar printed\n%s", format, gotRows, gotCols)
		}
	}
}

func TestJSONIsValidAndSplitAcrossBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b1 := exec.NewColumnarBatch(allTypesRecord(t, mem))
	b2 := exec.NewColumnarBatch(allTypesRecord(t, mem))
	defer b1.Release()
	defer b2.Release()
	got := render(t, formatJSON, mem, b1, b2)
	var v []map[string]any
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Fatalf("json output does not parse: %v\n%s", err, got)
	}
	if len(v) != 8 {
		t.Fatalf("got %d objects, want 8", len(v))
	}
	// An empty result is still an array.
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	s := newSink(formatJSON, sinkOptions{out: w, mem: mem})
	s.Columns(allTypesSchema(), true)
	s.finish(nil)
	if out.String() != "[]\n" {
		t.Errorf("empty json result: %q", out.String())
	}
}

func TestTableBounded(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := exec.NewColumnarBatch(allTypesRecord(t, mem))
	defer b.Release()
	got := render(t, formatTable, mem, b)
	for _, want := range []string{
		"|   b   | i32  |", // headers as written, not upper-cased
		"| true  |",
		"NULL",
		"a,b \"c\"",
		"{a=1, b=x}",
		"2024-01-02 03:04:05.123456789",
		"123.45 |", // numbers right-aligned
		"4 rows, finished\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table output lacks %q:\n%s", want, got)
		}
	}
	if b.Materialized() {
		t.Error("table format materialised the columnar batch")
	}
}

func TestTableUnboundedStreams(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "auction", Type: arrow.PrimitiveTypes.Int64},
		{Name: "channel", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	s := newSink(formatTable, sinkOptions{out: w, mem: mem})
	if err := s.Columns(schema, false); err != nil {
		t.Fatal(err)
	}
	header := out.String()
	wantHeader := "+----------------------+--------------------------------+\n" +
		"|              auction | channel                        |\n" +
		"+----------------------+--------------------------------+\n"
	if header != wantHeader {
		t.Fatalf("header printed at Columns:\n%s\nwant\n%s", header, wantHeader)
	}
	rec, err := exec.EncodeRows(mem, schema, []exec.Row{{int64(7), "apple"}, {int64(1234567), nil}})
	if err != nil {
		t.Fatal(err)
	}
	b := exec.NewColumnarBatch(rec)
	defer b.Release()
	if err := s.Batch(b); err != nil {
		t.Fatal(err)
	}
	// Flushed per batch: the rows are out before the result ends.
	wantRows := "|                    7 | apple                          |\n" +
		"|              1234567 | NULL                           |\n"
	if got := strings.TrimPrefix(out.String(), header); got != wantRows {
		t.Fatalf("rows after one batch:\n%q\nwant\n%q", got, wantRows)
	}
	long := strings.Repeat("x", 40)
	rb := exec.NewRowBatch(schema, []exec.Row{{int64(1), long}})
	defer rb.Release()
	s.Batch(rb)
	s.finish(nil)
	if !strings.Contains(out.String(), "| "+strings.Repeat("x", 27)+"... |") {
		t.Errorf("long value not cut to the column width:\n%s", out.String())
	}
	if !strings.HasSuffix(out.String(), "+\n3 rows, finished\n") {
		t.Errorf("no closing border and count:\n%s", out.String())
	}
}

func TestCSVQuoting(t *testing.T) {
	s := &delimSink{sep: ','}
	for in, want := range map[string]string{
		"plain":       "plain",
		"a,b":         `"a,b"`,
		`say "hi"`:    `"say ""hi"""`,
		"two\nlines":  "\"two\nlines\"",
		"cr\r":        "\"cr\r\"",
		"":            `""`,
		" lead space": " lead space",
	} {
		got := string(s.escape([]byte("x,"+in), 2))
		if got != "x,"+want {
			t.Errorf("csv %q -> %q, want %q", in, got, "x,"+want)
		}
	}
}

// The canonical text is sqlvalue's (its tests hold the per-type cases);
// JSON keeps it for numbers and quotes what JSON has no number for. The
// old shell-only expectations (100 for 100.0, 1e+21 and 1e-7 in the
// JavaScript layout, Infinity) gave way to the one spelling the kernel and
// CAST share (100.0, 1e+21, 1e-07, inf).
func TestFloatRendering(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		bits int
		text string
		json string
	}{
		{100, 64, "100.0", "100.0"},
		{0.1, 64, "0.1", "0.1"},
		{1e20, 64, "1e+20", "1e+20"},
		{1e-7, 64, "1e-07", "1e-07"},
		{-0.000001, 64, "-1e-06", "-1e-06"},
		{float64(float32(0.1)), 32, "0.1", "0.1"},
		{math.Inf(1), 64, "inf", `"Infinity"`},
		{math.NaN(), 64, "nan", `"NaN"`},
	} {
		typ := arrow.DataType(arrow.PrimitiveTypes.Float64)
		if tc.bits == 32 {
			typ = arrow.PrimitiveTypes.Float32
		}
		arr := floatArray(t, typ, tc.f)
		if got := string(newAppender(typ, styleText)(arr, 0, nil)); got != tc.text {
			t.Errorf("float %v/%d = %s, want %s", tc.f, tc.bits, got, tc.text)
		}
		got := string(newAppender(typ, styleJSON)(arr, 0, nil))
		if got != tc.json {
			t.Errorf("json float %v/%d = %s, want %s", tc.f, tc.bits, got, tc.json)
		}
		if !math.IsNaN(tc.f) && !math.IsInf(tc.f, 0) {
			var back float64
			if err := json.Unmarshal([]byte(got), &back); err != nil || back != tc.f && float32(back) != float32(tc.f) {
				t.Errorf("json %s reads back as %v, %v", got, back, err)
			}
		}
		arr.Release()
	}
}

func floatArray(t *testing.T, typ arrow.DataType, f float64) arrow.Array {
	b := array.NewBuilder(memory.NewGoAllocator(), typ)
	defer b.Release()
	switch bb := b.(type) {
	case *array.Float32Builder:
		bb.Append(float32(f))
	case *array.Float64Builder:
		bb.Append(f)
	}
	return b.NewArray()
}

func TestTimestampZoneAndSeconds(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	typ := &arrow.TimestampType{Unit: arrow.Second, TimeZone: "Europe/Paris"}
	bld := array.NewTimestampBuilder(mem, typ)
	defer bld.Release()
	bld.Append(arrow.Timestamp(tsBase.Unix()))
	arr := bld.NewArray()
	defer arr.Release()
	got := string(newAppender(typ, styleText)(arr, 0, nil))
	if got != "2024-01-02 04:04:05" {
		t.Errorf("zoned timestamp = %s, want 2024-01-02 04:04:05 (UTC+1)", got)
	}
}

func TestJSONStringEscaping(t *testing.T) {
	in := "q\"b\\s\x01\u2028é\xff<"
	got := string(appendJSONString(nil, in))
	var back string
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatalf("%s does not parse: %v", got, err)
	}
	if want := "q\"b\\s\x01\u2028é\ufffd<"; back != want {
		t.Errorf("round trip %q, want %q", back, want)
	}
}

// TIME prints as its canonical text in every format: quoted in JSON, as
// the table shows it (12:34:56.5, not Arrow's 12:34:56.500000).
func TestTimeOutput(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "t", Type: arrow.FixedWidthTypes.Time64us, Nullable: true},
		{Name: "t3", Type: arrow.FixedWidthTypes.Time32ms, Nullable: true}}, nil)
	rec, err := exec.EncodeRows(mem, schema, []exec.Row{{arrow.Time64(45296500000), arrow.Time64(3723004)}})
	if err != nil {
		t.Fatal(err)
	}
	b := exec.NewColumnarBatch(rec)
	defer b.Release()
	for format, want := range map[string]string{
		formatJSON:  `"t":"12:34:56.5","t3":"01:02:03.004"`,
		formatCSV:   "12:34:56.5,01:02:03.004",
		formatTable: "| 12:34:56.5 | 01:02:03.004 |",
	} {
		if got := render(t, format, mem, b); !strings.Contains(got, want) {
			t.Errorf("%s output lacks %q:\n%s", format, want, got)
		}
	}
}

// TestTableNullDistinctFromString: SQL NULL prints bare, the string 'NULL'
// quoted, in the table format (the kernel's text tables follow one rule).
func TestTableNullDistinctFromString(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	rec, err := exec.EncodeRows(mem, schema, []exec.Row{{"NULL"}, {nil}})
	if err != nil {
		t.Fatal(err)
	}
	b := exec.NewColumnarBatch(rec)
	defer b.Release()
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	sink := newSink(formatTable, sinkOptions{out: w, mem: mem, maxRows: 10})
	if err := sink.Columns(schema, true); err != nil {
		t.Fatal(err)
	}
	if err := sink.Batch(b); err != nil {
		t.Fatal(err)
	}
	if err := sink.finish(nil); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "| 'NULL' |") || !strings.Contains(got, "| NULL   |") {
		t.Fatalf("NULL and 'NULL' not told apart:\n%s", got)
	}
}
