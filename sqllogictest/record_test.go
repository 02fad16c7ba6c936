package sqllogictest

import (
	"reflect"
	"strings"
	"testing"
)

// Every directive of the format, with the reference runner's line rules:
// \r\n endings, white-space-only lines as separators, comment lines
// dropped even inside a record.
const parseSample = "hash-threshold 12\r\n" +
	"\n" +
	"# a comment before a record\n" +
	"statement ok\n" +
	"CREATE TABLE t1(a INTEGER,\n" +
	"# a comment inside a record is dropped\n" +
	"  b INTEGER)\n" +
	"   \t \n" +
	"statement error no such  table\n" +
	"SELECT * FROM nope\n" +
	"\n" +
	"statement error\n" +
	"SELECT * FROM nope\n" +
	"----\n" +
	"Table nope does not exist\n" +
	"\n" +
	"skipif mysql # a note\n" +
	"onlyif sqlite\n" +
	"query ITR rowsort label-7\n" +
	"SELECT a, 'x', 1.5\n" +
	"  FROM t1\n" +
	"----\n" +
	"1\n" +
	"x\n" +
	"1.500\n" +
	"\n" +
	"query I\n" +
	"SELECT 1\n" +
	"\n" +
	"query T valuesort\n" +
	"SELECT b FROM t1\n" +
	"----\n" +
	"\n" +
	"query II nosort\n" +
	"SELECT a, b FROM t1\n" +
	"----\n" +
	"30 values hashing to 3c13dee48d9356ae19af2515e05e6b54\n" +
	"\n" +
	"halt\n" +
	"\n" +
	"query IX nosort\nSELECT 1\n\n" +
	"query I sideways\nSELECT 1\n\n" +
	"select 1\n\n" +
	"statement maybe\nSELECT 1\n\n" +
	"query I\n----\n1\n\n" +
	"hash-threshold many\n\n" +
	"skipif\nquery I\nSELECT 1\n"

func TestParseDirectives(t *testing.T) {
	recs, err := Parse("x.test", strings.NewReader(parseSample))
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{
		{File: "x.test", Line: 1, Kind: HashThreshold, Threshold: 12},
		{File: "x.test", Line: 4, Kind: Statement, SQL: "CREATE TABLE t1(a INTEGER,\n  b INTEGER)"},
		{File: "x.test", Line: 9, Kind: Statement, ExpectError: true, ErrorPattern: "no such  table", SQL: "SELECT * FROM nope"},
		{File: "x.test", Line: 12, Kind: Statement, ExpectError: true, SQL: "SELECT * FROM nope", ErrorText: "Table nope does not exist"},
		{File: "x.test", Line: 19, Kind: Query, Types: "ITR", Sort: RowSort, Label: "label-7",
			Conditions: []Condition{{Only: false, Engine: "mysql"}, {Only: true, Engine: "sqlite"}},
			SQL:        "SELECT a, 'x', 1.5\n  FROM t1", HasResult: true, Expected: []string{"1", "x", "1.500"}},
		{File: "x.test", Line: 27, Kind: Query, Types: "I", SQL: "SELECT 1"},
		{File: "x.test", Line: 30, Kind: Query, Types: "T", Sort: ValueSort, SQL: "SELECT b FROM t1", HasResult: true, Expected: []string{}},
		{File: "x.test", Line: 34, Kind: Query, Types: "II", SQL: "SELECT a, b FROM t1", HasResult: true,
			Expected: []string{"30 values hashing to 3c13dee48d9356ae19af2515e05e6b54"}},
		{File: "x.test", Line: 39, Kind: Halt},
	}
	if len(recs) < len(want) {
		t.Fatalf("%d records, want at least %d: %+v", len(recs), len(want), recs)
	}
	for i, w := range want {
		if !reflect.DeepEqual(recs[i], w) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, recs[i], w)
		}
	}
	// The rest are invalid, each with the reference runner's complaint,
	// and parsing went on after each.
	invalid := []struct {
		line int
		msg  string
	}{
		{41, "unknown type character 'X'"},
		{44, "unknown sort method: 'sideways'"},
		{47, "unknown record type \"select\""},
		{49, "statement argument should be 'ok' or 'error'"},
		{52, "query without SQL"},
		{56, "hash-threshold \"many\""},
		{58, "skipif without an engine name"},
	}
	rest := recs[len(want):]
	if len(rest) != len(invalid) {
		t.Fatalf("%d invalid records, want %d: %+v", len(rest), len(invalid), rest)
	}
	for i, w := range invalid {
		r := rest[i]
		if r.Kind != Invalid || r.Line != w.line || !strings.Contains(r.Problem, w.msg) {
			t.Errorf("invalid record %d: line %d kind %d %q, want line %d %q", i, r.Line, r.Kind, r.Problem, w.line, w.msg)
		}
	}
}

func TestParseEmptyAndCommentOnly(t *testing.T) {
	for _, src := range []string{"", "\n\n", "# only a comment\n#another\n"} {
		recs, err := Parse("e.test", strings.NewReader(src))
		if err != nil || len(recs) != 0 {
			t.Errorf("%q: %d records, %v", src, len(recs), err)
		}
	}
}

func TestParseFileMissing(t *testing.T) {
	if _, err := ParseFile("no/such/file.test"); err == nil {
		t.Error("a missing file parsed")
	}
}
