package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "new\nline\ttab\r", "\x00\x1f ctl", "ünïcödé €", "bad\xffutf8"} {
		enc := appendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatalf("%q encoded as %s: not JSON: %v", s, enc, err)
		}
		want := strings.ToValidUTF8(s, "\ufffd")
		if got != want {
			t.Errorf("%q round-tripped to %q, want %q", s, got, want)
		}
	}
}

func TestWriteNDJSON(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "price", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "channel", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "dateTime", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{42, -7}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{`Go"ogle`, ""}, []bool{true, false})
	base := time.Date(2015, 7, 15, 0, 0, 0, 123_000_000, time.UTC).UnixMilli()
	b.Field(2).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{arrow.Timestamp(base), arrow.Timestamp(base + 1000)}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()

	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	if err := writeNDJSON(w, rec); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	want := `{"price":42,"channel":"Go\"ogle","dateTime":"2015-07-15 00:00:00.123"}` + "\n" +
		`{"price":-7,"channel":null,"dateTime":"2015-07-15 00:00:01.123"}` + "\n"
	if buf.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", buf.String(), want)
	}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %s is not JSON: %v", line, err)
		}
	}
}

func TestWriteNDJSONRejectsUnsupportedType(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "ok", Type: arrow.FixedWidthTypes.Boolean}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.BooleanBuilder).Append(true)
	rec := b.NewRecordBatch()
	defer rec.Release()
	err := writeNDJSON(bufio.NewWriter(&bytes.Buffer{}), rec)
	if err == nil || !strings.Contains(err.Error(), `"ok"`) {
		t.Fatalf("want an error naming column \"ok\", got %v", err)
	}
}

func TestCompareResults(t *testing.T) {
	rows := func(s ...string) [][]string {
		var out [][]string
		for _, r := range s {
			out = append(out, strings.Split(r, ","))
		}
		return out
	}
	same := []struct{ a, b [][]string }{
		{rows("x,1,10", "y,2,20"), rows("y,2,20", "x,1,10")}, // order does not matter
		{rows("x,1000000"), rows("x,1e+06")},                 // number formatting
		{rows("x,0.30000000000000004"), rows("x,0.3")},       // float rounding
		{rows("NULL,3"), rows("NULL,3")},                     // nulls
		{nil, nil},                                           // empty results
		{rows("10,a", "9,b"), rows("9.0,b", "10,a")},         // numeric sort keys
		{rows("2015-07-15 00:00:00.123000"), rows("2015-07-15 00:00:00.123000")},
	}
	for i, c := range same {
		if err := compareResults(c.a, c.b); err != nil {
			t.Errorf("case %d: want same, got %v", i, err)
		}
	}
	differ := []struct{ a, b [][]string }{
		{rows("x,1"), rows("x,1", "y,2")},                        // row count
		{rows("x,1"), rows("x,2")},                               // value
		{rows("x,1"), rows("X,1")},                               // string case
		{rows("x,9007199254740993"), rows("x,9007199254740992")}, // large ints exactly
		{rows("x,1"), rows("x,1,1")},                             // column count
		{rows("x,NULL"), rows("x,0")},                            // null is not zero
	}
	for i, c := range differ {
		if err := compareResults(c.a, c.b); err == nil {
			t.Errorf("case %d: want a mismatch, got none", i)
		}
	}
}

func TestCanonicalFormsAgree(t *testing.T) {
	ts := time.Date(2015, 7, 15, 0, 10, 0, 456_000_000, time.UTC)
	tsType := &arrow.TimestampType{Unit: arrow.Millisecond}
	if a, d := canonArrow(arrow.Timestamp(ts.UnixMilli()), tsType), canonDuck(ts); a != d {
		t.Errorf("timestamp: clink %q, DuckDB %q", a, d)
	}
	if a, d := canonArrow(int64(123456789012), arrow.PrimitiveTypes.Int64), canonDuck(big.NewInt(123456789012)); a != d {
		t.Errorf("sum: clink %q, DuckDB %q", a, d)
	}
	dec := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	if got := canonArrow(decimal128.FromI64(12345), dec); !sameCell(got, "123.45") {
		t.Errorf("decimal: %q, want 123.45", got)
	}
	if a, d := canonArrow(nil, tsType), canonDuck(nil); a != d {
		t.Errorf("null: clink %q, DuckDB %q", a, d)
	}
}

func TestSelectQueries(t *testing.T) {
	qs, err := selectQueries("join, scan")
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 || qs[0].Name != "scan" || qs[1].Name != "join" {
		t.Fatalf("got %v, want scan then join (benchmark order)", qs)
	}
	if _, err := selectQueries("scan,nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("want an error naming the unknown query, got %v", err)
	}
	if _, err := bind("SELECT * FROM '{bids}'", datasetIn("/tmp/it's")); err == nil {
		t.Fatal("a path with a quote was accepted")
	}
}

// TestGeneratedFilesAgree checks the data: DuckDB reads the same bids from
// the Parquet file and from the NDJSON file, and exactly as many as asked.
func TestGeneratedFilesAgree(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const n = 5000
	ds, err := prepareData(ctx, dir, n, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if _, err := prepareData(ctx, dir, n, &log); err != nil || !strings.Contains(log.String(), "reusing") {
		t.Fatalf("second prepareData did not reuse the files: %v, %q", err, log.String())
	}
	dk, err := newDuckRunner(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer dk.Close()
	const agg = "SELECT COUNT(*), SUM(price), MAX(bidder), MIN(auction), MAX(channel), MAX(url), MAX(dateTime), MIN(dateTime), MAX(extra) FROM "
	fromPq, err := dk.result(ctx, mustBind(t, agg+"read_parquet('{bids}')", ds))
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := dk.result(ctx, mustBind(t, agg+duckBidsJSON, ds))
	if err != nil {
		t.Fatal(err)
	}
	if err := compareResults(fromPq, fromJSON); err != nil {
		t.Fatalf("Parquet and NDJSON disagree: %v", err)
	}
	if fromPq[0][0] != "5000" {
		t.Fatalf("bids.parquet has %s rows, want %d", fromPq[0][0], n)
	}
	auctions, err := dk.result(ctx, mustBind(t, "SELECT COUNT(*), COUNT(DISTINCT id) FROM read_parquet('{auctions}')", ds))
	if err != nil {
		t.Fatal(err)
	}
	if auctions[0][0] == "0" || auctions[0][0] != auctions[0][1] {
		t.Fatalf("auctions: %v, want a non-empty table with unique ids", auctions[0])
	}
}

func mustBind(t *testing.T, q string, ds dataset) string {
	t.Helper()
	s, err := bind(q, ds)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRunSmall runs the whole benchmark on a small data set: every query
// clink supports must give DuckDB's answer.
func TestRunSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("generates data and runs both engines")
	}
	var out, log bytes.Buffer
	failed, err := run(context.Background(), config{bids: 20000, threads: 1, data: t.TempDir(), queries: "all", repeat: 1}, &out, &log)
	if err != nil {
		t.Fatal(err)
	}
	if failed {
		t.Fatalf("the run failed:\n%s\n%s", log.String(), out.String())
	}
	for _, q := range queries {
		if !strings.Contains(out.String(), "| "+q.Name+" |") {
			t.Errorf("the report has no row for %s:\n%s", q.Name, out.String())
		}
	}
	if strings.Contains(out.String(), "MISMATCH") {
		t.Fatalf("mismatch:\n%s", out.String())
	}
}
