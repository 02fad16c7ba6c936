package jsonfmt

import (
	"bytes"
	"errors"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

var linesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "l", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "r", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), Nullable: true},
}, nil)

// linePieces are what the NDJSON lines of the tests are made of: good
// records, bad ones, blank lines of every kind of white space, objects cut
// over two lines, records with a newline inside a string.
var linePieces = []string{
	`{"l":1,"s":"a","r":{"x":2}}`, `{"s":"b","l":-7}`, `  {"l":3}  `, `{"l":4}` + "\r", `{}`,
	`{"l":5,"extra":"` + strings.Repeat("z", 70) + `"}`, `{"r":{"x":null},"l":6}`,
	``, `   `, "\t", "\r", "\f", "\v ",
	`{"l":`, `7}`, `{"l":8,`, `"s":"c"}`, `{"s":"nl`, `here"}`, `{"l":1}{"l":2}`, `[1]`, `"str"`, `null`,
	`{"l":"x"}`, `{"l":1.5}`, `{"l":1,}`, "{\"s\":\"tab\there\"}", "{\"s\":\"\xff\"}", `{"s":"\ud83d"}`,
}

// refLines is the reference for DecodeLines: the lines split first (blank
// ones dropped, as the NDJSON reader did) and decoded by the row decode,
// the authority. It returns the rows, the skips by reason and the first
// error with its line's offset.
func refLines(t *testing.T, data []byte, skip bool) ([]exec.Row, map[string]int64, error, int) {
	t.Helper()
	d := newDec(t, memory.NewGoAllocator(), linesSchema, Options{SkipErrors: skip, RowOnly: true})
	recs, offs, _ := splitLines(data, len(data)+1)
	res, err := d.Decode(recs)
	if err != nil {
		var re *RecordError
		if !errors.As(err, &re) {
			t.Fatal(err)
		}
		return nil, nil, err, offs[re.Index]
	}
	return res.Rows, d.Stats().Skipped, nil, 0
}

// decodeAllLines runs DecodeLines over data with the given limit until it
// is consumed, checking that every call ends at a line end.
func decodeAllLines(t *testing.T, d *Decoder, data []byte, limit int) ([]exec.Row, error, int) {
	t.Helper()
	var rows []exec.Row
	base := 0
	for base < len(data) {
		res, used, err := d.DecodeLines(data[base:], limit)
		if err != nil {
			var re *RecordError
			if !errors.As(err, &re) {
				t.Fatal(err)
			}
			return nil, err, base + re.Offset
		}
		if used <= 0 || (base+used < len(data) && data[base+used-1] != '\n') {
			t.Fatalf("DecodeLines took %d bytes at %d, not through a newline: %q", used, base, data[base:])
		}
		if res.N > limit {
			t.Fatalf("DecodeLines returned %d records, limit %d", res.N, limit)
		}
		if res.Kept != nil {
			t.Fatalf("DecodeLines returned kept %v", res.Kept)
		}
		if res.Rec != nil && res.N == 0 {
			res.Rec.Release()
		} else {
			rows = append(rows, rowsOf(res)...)
		}
		base += used
	}
	return rows, nil, 0
}

// DecodeLines over random NDJSON (any lines of linePieces, with or without
// a last newline) against the reference: the same rows, the same skips by
// reason, and with on-error = fail the same error at the same line, for
// batch limits that cut anywhere.
func TestDecodeLinesMatchesSplitLines(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(7))
	for k := 0; k < 3000; k++ {
		n := 1 + rng.Intn(12)
		var b bytes.Buffer
		for i := 0; i < n; i++ {
			if rng.Intn(3) == 0 {
				b.WriteString(linePieces[rng.Intn(len(linePieces))])
			} else {
				b.WriteString(linePieces[rng.Intn(7)]) // mostly good records
			}
			if i < n-1 || rng.Intn(2) == 0 {
				b.WriteByte('\n')
			}
		}
		data := b.Bytes()
		for _, skip := range []bool{true, false} {
			wantRows, wantSkips, wantErr, wantOff := refLines(t, data, skip)
			for _, limit := range []int{1, 3, 8192} {
				d := newDec(t, mem, linesSchema, Options{SkipErrors: skip})
				rows, err, off := decodeAllLines(t, d, data, limit)
				if (err == nil) != (wantErr == nil) || (err != nil && (err.Error() != wantErr.Error() || off != wantOff)) {
					t.Fatalf("%q skip=%v limit=%d: error %v at %d, want %v at %d", data, skip, limit, err, off, wantErr, wantOff)
				}
				if err != nil {
					continue
				}
				if !reflect.DeepEqual(rows, wantRows) && !(len(rows) == 0 && len(wantRows) == 0) {
					t.Fatalf("%q skip=%v limit=%d:\nrows %v\nwant %v", data, skip, limit, rows, wantRows)
				}
				if got := d.Stats().Skipped; !reflect.DeepEqual(got, wantSkips) {
					t.Fatalf("%q skip=%v limit=%d: skipped %v, want %v", data, skip, limit, got, wantSkips)
				}
			}
		}
	}
}

// Good lines decode columnar in place, and a batch stops at its limit.
func TestDecodeLinesColumnar(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newDec(t, mem, linesSchema, Options{})
	line := `{"l":1,"s":"a","url":"https://x/y?q=1"}` + "\n"
	data := []byte(strings.Repeat(line, 10) + "\n  \n" + `{"l":2}`)
	res, used, err := d.DecodeLines(data, 4)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rec == nil || res.N != 4 || used != 4*len(line) {
		t.Fatalf("first batch: columnar %v, %d records, %d bytes; want columnar, 4, %d", res.Rec != nil, res.N, used, 4*len(line))
	}
	res.Rec.Release()
	res, used2, err := d.DecodeLines(data[used:], 100)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rec == nil || res.N != 7 || used+used2 != len(data) {
		t.Fatalf("second batch: columnar %v, %d records, to %d of %d", res.Rec != nil, res.N, used+used2, len(data))
	}
	rows := rowsOf(res)
	if last := rows[6]; last[0] != int64(2) || last[1] != nil {
		t.Fatalf("last row %v", last)
	}
	if st := d.Stats(); st.ColumnarBatches != 2 || st.RowBatches != 0 || len(st.Skipped) != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// A Kafka message may be one pretty-printed document: the walk, which
// ends a record at a newline, walks it again with its newlines as tabs, so
// it stays columnar; a raw newline inside a string is still malformed.
func TestPrettyPrintedDocumentStaysColumnar(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	pretty := "{\n  \"l\": 5,\n  \"s\": \"x\",\r\n  \"r\": {\n    \"x\": 6\n  }\n}\n"
	d := newDec(t, mem, linesSchema, Options{})
	res, err := d.Decode(lines(`{"l":1}`, pretty, "\n", `{"l":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Rec == nil {
		t.Fatal("a pretty-printed document sent the batch to the row decode")
	}
	got := rowsOf(res)
	rd := newDec(t, mem, linesSchema, Options{RowOnly: true})
	rres, err := rd.Decode(lines(`{"l":1}`, pretty, "\n", `{"l":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := rowsOf(rres); !reflect.DeepEqual(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	if !reflect.DeepEqual(res.Kept, []int{0, 1, 3}) {
		t.Fatalf("kept %v: the newline-only record is blank", res.Kept)
	}
	bad := "{\"s\": \"a\nb\"}"
	_, cerr := newDec(t, mem, linesSchema, Options{}).Decode(lines(bad))
	_, rerr := newDec(t, mem, linesSchema, Options{RowOnly: true}).Decode(lines(bad))
	if cerr == nil || rerr == nil || cerr.Error() != rerr.Error() {
		t.Fatalf("a newline inside a string: columnar %v, row %v", cerr, rerr)
	}
}
