package jsonfmt

import (
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A walk that fails inside a nested ROW or ARRAY value has already
// appended to that value's children, while the ROW or ARRAY itself has not
// counted the value. The rollback must cut the children back too, or the
// next record's nested values are read from the failed one's. Since the
// walk stops at a newline, a valid pretty-printed Kafka document whose
// first line opens a nested value is walked twice (walkTabbed), and an
// NDJSON line cut inside a nested value is skipped (on-error = 'skip').
func TestNestedRollbackAfterFailedWalk(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	check := func(name string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\ngot  %v\nwant %v", name, got, want)
		}
	}
	// Kafka: pretty-printed documents, each then a one-line one.
	docs := lines(
		"{\"r\": {\"x\": 6, \"y\": \"a\",\n  \"z\": 1}}",
		`{"r": {"x": 7, "y": "b"}}`,
		"{\"arr\": [1, 2,\n 3]}",
		`{"arr": [4]}`,
	)
	rd := newDec(t, mem, allTypes, Options{RowOnly: true})
	rres, err := rd.Decode(docs)
	if err != nil {
		t.Fatal(err)
	}
	want := rowsOf(rres)
	d := newDec(t, mem, allTypes, Options{})
	res, err := d.Decode(docs)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rec == nil {
		t.Fatal("the batch fell back to the row decode")
	}
	check("Decode of pretty-printed documents", rowsOf(res), want)

	// NDJSON, on-error = 'skip': a line cut inside a nested value is
	// malformed and skipped; the good lines after it keep their values.
	data := []byte(strings.Join([]string{
		`{"r": {"x": 6, "y": "a",`, `"z": 1}}`,
		`{"r": {"x": 7, "y": "b"}}`,
		`{"arr": [1, 2,`, `3]}`,
		`{"arr": [4]}`,
	}, "\n"))
	good := lines(`{"r": {"x": 7, "y": "b"}}`, `{"arr": [4]}`)
	rres, err = newDec(t, mem, allTypes, Options{RowOnly: true}).Decode(good)
	if err != nil {
		t.Fatal(err)
	}
	want = rowsOf(rres)
	d = newDec(t, mem, allTypes, Options{SkipErrors: true})
	res, used, err := d.DecodeLines(data, 100)
	if err != nil || used != len(data) {
		t.Fatalf("DecodeLines: %v, %d of %d bytes", err, used, len(data))
	}
	if res.Rec == nil {
		t.Fatal("DecodeLines fell back to the row decode")
	}
	check("DecodeLines skipping lines cut inside nested values", rowsOf(res), want)
}
