package sql

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/clink-sql/clink/sql/ast"
)

// The round trip holds the parser and the printer to each other over
// every statement we have: each parses, prints, re-parses to an equal tree
// (spans aside), and the printed form is a fixpoint of print∘parse.

// zeroSpans clears every ast.Span reachable from v, so trees parsed from
// different texts compare equal when their structure is.
func zeroSpans(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			zeroSpans(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[ast.Span]() {
			v.Set(reflect.Zero(v.Type()))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			zeroSpans(v.Field(i))
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			zeroSpans(v.Index(i))
		}
	}
}

// equalTrees reports whether a and b are the same tree, spans aside.
func equalTrees(a, b ast.Node) bool {
	zeroSpans(reflect.ValueOf(a))
	zeroSpans(reflect.ValueOf(b))
	return reflect.DeepEqual(a, b)
}

// roundTrip checks one statement that parsed: it prints, re-parses to an
// equal tree and prints the same again. It returns the printed form.
func roundTrip(t *testing.T, where string, st ast.Statement) string {
	t.Helper()
	out := st.String()
	st2, err := Parse(out)
	if err != nil {
		t.Errorf("%s: the printed form does not parse: %v\n  printed: %s", where, err, out)
		return out
	}
	if out2 := st2.String(); out2 != out {
		t.Errorf("%s: print is not a fixpoint:\n  first:  %s\n  second: %s", where, out, out2)
	}
	if !equalTrees(st, st2) {
		t.Errorf("%s: the printed form parses to another tree:\n  printed: %s", where, out)
	}
	return out
}

// stmtCase is one statement of a corpus.
type stmtCase struct {
	where string
	text  string
}

// sltRecords reads the statement and query bodies of a sqllogictest file.
// Records marked onlyif another engine are skipped (clink is none of
// them); a bare halt ends the file.
func sltRecords(t *testing.T, path string, vars *strings.Replacer) []stmtCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []stmtCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	line := 0
	onlyif := false
	var body []string
	var cur *stmtCase
	flush := func() {
		if cur != nil && len(body) > 0 {
			cur.text = strings.Join(body, "\n")
			if vars != nil {
				cur.text = vars.Replace(cur.text)
			}
			out = append(out, *cur)
		}
		cur, body = nil, nil
	}
	inResult := false
	for sc.Scan() {
		line++
		l := sc.Text()
		switch {
		case cur != nil && !inResult:
			if l == "----" {
				inResult = true
				continue
			}
			if strings.TrimSpace(l) == "" {
				flush()
				continue
			}
			body = append(body, l)
			continue
		case inResult:
			if strings.TrimSpace(l) == "" {
				inResult = false
				flush()
			}
			continue
		}
		fields := strings.Fields(l)
		if len(fields) == 0 || strings.HasPrefix(l, "#") {
			continue
		}
		switch fields[0] {
		case "onlyif":
			onlyif = true
		case "halt":
			if !onlyif {
				return out
			}
			onlyif = false
		case "statement", "query":
			if onlyif {
				// Another engine's record: read and drop it.
				onlyif = false
				for sc.Scan() {
					line++
					if strings.TrimSpace(sc.Text()) == "" {
						break
					}
				}
				continue
			}
			cur = &stmtCase{where: fmt.Sprintf("%s:%d", filepath.Base(path), line)}
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// scriptStatements splits a .sql file into its statements.
func scriptStatements(t *testing.T, path string, vars *strings.Replacer) []stmtCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if vars != nil {
		text = vars.Replace(text)
	}
	var out []stmtCase
	for _, p := range Split(text) {
		where := fmt.Sprintf("%s/%s:%d", filepath.Base(filepath.Dir(path)), filepath.Base(path), p.Line)
		out = append(out, stmtCase{where: where, text: p.Text})
	}
	return out
}

// nexmarkVars substitutes the placeholders of the nexmark files.
var nexmarkVars = strings.NewReplacer(
	"${NEXMARK_TABLE}", "datagen", "${TPS}", "10000", "${EVENTS_NUM}", "100000",
	"${PERSON_PROPORTION}", "1", "${AUCTION_PROPORTION}", "3", "${BID_PROPORTION}", "46",
	"${BOOTSTRAP_SERVERS}", "localhost:9092", "${FLINK_HOME}", "/opt/flink", "${NEXMARK_DIR}", "/opt/nexmark",
	"${SUBMIT_TIME}", "0",
)

var sltVars = strings.NewReplacer("${DATA}", "/data")

// checkCorpus parses every case: the ones that do not parse must be the
// ones listed in known (where -> a part of the message), and every one
// that parses goes through the round trip. It returns the number of
// statements that parsed.
func checkCorpus(t *testing.T, cases []stmtCase, known map[string]string) int {
	t.Helper()
	parsed := 0
	for _, c := range cases {
		st, err := Parse(c.text)
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Errorf("%s: %v\n  %s", c.where, err, c.text)
				continue
			}
			if want, ok := known[c.where]; ok {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s: error %q, want one containing %q", c.where, err, want)
				}
				delete(known, c.where)
				continue
			}
			t.Errorf("%s: %v\n  %s", c.where, err, c.text)
			continue
		}
		if want, ok := known[c.where]; ok {
			t.Errorf("%s: parsed, but listed as failing with %q", c.where, want)
			delete(known, c.where)
		}
		parsed++
		roundTrip(t, c.where, st)
	}
	for where, want := range known {
		t.Errorf("%s: listed as failing with %q but not in the corpus", where, want)
	}
	return parsed
}

// repoRoot is the repository root, from the sql package directory.
const repoRoot = ".."

// queryFiles are the standard-text queries of a benchmark suite the
// repository holds once, for the bench module and these tests alike
// (testdata/tpch/queries/q*.sql, testdata/clickbench/queries/q*.sql).
func queryFiles(suite string) []string {
	files, _ := filepath.Glob(filepath.Join(repoRoot, "testdata", suite, "queries", "q*.sql"))
	return files
}

// repoCorpus is every statement the repository holds: the bodies of
// testdata/sql/*.slt, testdata/explain/*.sql, the TPC-H and ClickBench
// queries and sql/testdata/**/*.sql.
func repoCorpus(t *testing.T) []stmtCase {
	t.Helper()
	var cases []stmtCase
	slts, _ := filepath.Glob(filepath.Join(repoRoot, "testdata", "sql", "*.slt"))
	for _, f := range slts {
		cases = append(cases, sltRecords(t, f, sltVars)...)
	}
	explains, _ := filepath.Glob(filepath.Join(repoRoot, "testdata", "explain", "*.sql"))
	for _, f := range explains {
		cases = append(cases, scriptStatements(t, f, nil)...)
	}
	ours := append(queryFiles("tpch"), queryFiles("clickbench")...)
	_ = filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".sql") {
			ours = append(ours, path)
		}
		return err
	})
	for _, f := range ours {
		cases = append(cases, scriptStatements(t, f, nexmarkVars)...)
	}
	if len(slts) == 0 || len(explains) == 0 || len(ours) == 0 {
		t.Fatalf("corpus missing: %d slt, %d explain, %d sql/testdata files", len(slts), len(explains), len(ours))
	}
	return cases
}

func TestRoundTripRepoCorpus(t *testing.T) {
	cases := repoCorpus(t)
	known := map[string]string{
		// Errors the slt files expect from the parser.
		"40_errors.slt:21": "expected an expression after SELECT, found FROM",
		// nexmark q14's user-defined function.
		"nexmark/q14.sql:1": "CREATE FUNCTION is not supported",
	}
	n := checkCorpus(t, cases, known)
	t.Logf("%d of %d statements parsed and round-tripped", n, len(cases))
}

// nexmarkDir is the shared copy of the nexmark queries (with q6_valid.sql).
const nexmarkDir = "../../shared/nexmark-queries"

func TestRoundTripNexmarkShared(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(nexmarkDir, "*.sql"))
	if len(files) == 0 {
		t.Skipf("no nexmark queries at %s", nexmarkDir)
	}
	var cases []stmtCase
	for _, f := range files {
		cases = append(cases, scriptStatements(t, f, nexmarkVars)...)
	}
	n := checkCorpus(t, cases, map[string]string{"nexmark-queries/q14.sql:1": "CREATE FUNCTION is not supported"})
	t.Logf("%d of %d statements parsed and round-tripped", n, len(cases))
}

// sltCorpusDirs are where the SQLite sqllogictest corpus may be: the
// shared copy next to the repository, and $CLINK_SLT_CORPUS.
func sltCorpusDirs() []string {
	dirs := []string{filepath.Join(repoRoot, "..", "shared", "sqllogictest")}
	if d := os.Getenv("CLINK_SLT_CORPUS"); d != "" {
		dirs = append(dirs, d)
	}
	return dirs
}

// sltKnown are the corpus statements that do not parse, each outside the
// dialect: SQLite's and MySQL's X'...' blob literals, the empty IN list
// (SQLite's; PostgreSQL and the standard refuse it too), and the DELETE
// and UPDATE the corpus expects to fail on a view.
var sltKnown = map[string]string{
	"in1.test:313":                "binary string literals (x'...') are not supported",
	"in1.test:324":                "binary string literals (x'...') are not supported",
	"slt_lang_createview.test:69": "DELETE is not supported",
	"slt_lang_createview.test:80": "UPDATE is not supported",
}

func TestRoundTripSQLiteCorpus(t *testing.T) {
	var files []string
	for _, d := range sltCorpusDirs() {
		for _, pat := range []string{"*.test", filepath.Join("evidence", "*.test")} {
			fs, _ := filepath.Glob(filepath.Join(d, pat))
			files = append(files, fs...)
		}
		if len(files) > 0 {
			break
		}
	}
	if len(files) == 0 {
		t.Skipf("no sqllogictest corpus at %s (set CLINK_SLT_CORPUS to its directory)", strings.Join(sltCorpusDirs(), " or "))
	}
	var cases []stmtCase
	for _, f := range files {
		cases = append(cases, sltRecords(t, f, nil)...)
	}
	known := map[string]string{}
	for k, v := range sltKnown {
		known[k] = v
	}
	n := checkCorpus(t, cases, known)
	t.Logf("%d of %d statements parsed and round-tripped", n, len(cases))
}
