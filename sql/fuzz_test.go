package sql

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xwb1989/sqlparser"
)

// Inputs on which sqlparser itself panics (index out of range in its
// MySQL special-comment scanner, among others).
var sqlparserPanics = []string{
	"/*!*/",
	"SELECT a FROM t /*!*/",
	"SELECT /*!",
}

func TestSQLParserPanicsAreErrors(t *testing.T) {
	// Prove the inputs really panic in sqlparser, so the test guards the
	// recover() and not a lucky input.
	panicked := 0
	for _, in := range sqlparserPanics {
		func() {
			defer func() {
				if recover() != nil {
					panicked++
				}
			}()
			_, _ = sqlparser.Parse(in)
		}()
	}
	if panicked == 0 {
		t.Fatalf("none of %q panics in sqlparser any more", sqlparserPanics)
	}
	// The dialect layer drops comments before sqlparser sees the text, and
	// parseSQL recovers whatever panics remain.
	if q, ok := mustParse(t, "SELECT a FROM t /*!*/").(*Query); !ok || sqlparser.String(q.AST) != "select a from t" {
		t.Errorf("comment not dropped")
	}
	for _, in := range []string{"/*!*/", "SELECT /*!"} {
		var pe *Error
		if _, err := Parse(in); !errors.As(err, &pe) {
			t.Errorf("Parse(%q) error = %v, want *Error", in, err)
		}
	}
	for _, in := range sqlparserPanics {
		if _, err := parseSQL(in); err == nil {
			t.Errorf("parseSQL(%q): want an error", in)
		}
	}
	var crash *parserCrash
	if _, err := parseSQL("/*!*/"); !errors.As(err, &crash) {
		t.Errorf("parseSQL(/*!*/) = %v, want a recovered panic", err)
	}
}

func FuzzParse(f *testing.F) {
	seeds := append([]string{}, sqlparserPanics...)
	seeds = append(seeds,
		"SELECT a, CAST(b AS DECIMAL(10, 2)) FROM 'x.parquet' WHERE c || d = 'e'",
		"SELECT * FROM TABLE(HOP(TABLE bid, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND))",
		"CREATE TABLE t (a ROW<b ARRAY<MAP<STRING, INT>>>, WATERMARK FOR a AS a - INTERVAL '1' SECOND) WITH ('k' = 'v')",
		"EXPLAIN (ANALYZE, FORMAT JSON) WITH x AS (SELECT 1) SELECT * FROM x",
		"SET 'a' = 'b'", "RESET", "SHOW CREATE TABLE t", "DESC t", "INSERT INTO s SELECT count(*) FILTER (WHERE a) FROM t",
		"SELECT TIMESTAMP '2020-01-01', DATE 'x', CASE WHEN a THEN b END || c FROM t",
		"SELECT ((((", "SELECT '", "SELECT `", "SELECT \"", "CAST(", "SELECT CAST(a AS", "TABLE(TUMBLE(",
	)
	files, _ := filepath.Glob(filepath.Join("testdata", "nexmark", "*.sql"))
	for _, fn := range files {
		data, err := os.ReadFile(fn)
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range Split(string(data)) {
			seeds = append(seeds, p.Text)
		}
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		st, err := Parse(text)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error %T %v is not an *Error", text, err, err)
			}
			if strings.Contains(pe.Msg, "internal error") {
				t.Fatalf("Parse(%q): %v", text, err)
			}
			if pe.Line < 0 || pe.Column < 0 || pe.Line > strings.Count(text, "\n")+1 {
				t.Fatalf("Parse(%q): position out of the text: %v", text, err)
			}
			return
		}
		if st == nil {
			t.Fatalf("Parse(%q) = nil, nil", text)
		}
		_, _ = ParseType(text)
		_, _ = ParseExpr(text)
	})
}
