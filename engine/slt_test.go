package engine

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/changelog"
	"github.com/clink-sql/clink/exec/expr"
)

// The SQL suites are sqllogictest-style files under testdata/sql. Every file
// runs in each of sltModes: columnar on, columnar off
// (CLINK_DISABLE_COLUMNAR=1), born-columnar output off
// (CLINK_DISABLE_COLUMNAR_OUTPUT=1), scans without late materialisation
// (CLINK_DISABLE_LATE_MATERIALIZATION=1), plain recycling; the expected
// results are the same for all. A query marked `mat=0` must also run
// with zero batch materialisations when columnar is on, and with some when
// it is off: that proves the columnar path fired, not only that it agrees.
//
// Directives:
//
//	statement ok | statement error <regexp>
//	query [rowsort|nosort] [mat=N] [changelog]
//	   changelog: the result is a changelog (row kind first); it is applied
//	   and the table it leaves is compared (which changes lead there depends
//	   on how the inputs interleave)
//	<sql>
//	----
//	v1 | v2 | ...        (NULL for null; values as expr.FormatValue prints them)

type sltRecord struct {
	line     int
	kind     string // statement or query
	errRe    string
	rowsort  bool
	applied  bool // changelog: compare the table the changes leave
	mat      int  // -1: unchecked
	sql      string
	expected []string
}

func parseSLT(t *testing.T, path, data string) []sltRecord {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []sltRecord
	sc := bufio.NewScanner(f)
	lineNo := 0
	next := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		lineNo++
		return strings.ReplaceAll(sc.Text(), "${DATA}", data), true
	}
	for {
		l, ok := next()
		if !ok {
			break
		}
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		r := sltRecord{line: lineNo, mat: -1}
		fields := strings.Fields(l)
		switch fields[0] {
		case "statement":
			r.kind = "statement"
			if len(fields) > 1 && fields[1] == "error" {
				r.errRe = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(l, "statement"), " error"))
				if r.errRe == "" {
					r.errRe = "."
				}
			}
		case "query":
			r.kind = "query"
			for _, f := range fields[1:] {
				switch {
				case f == "rowsort":
					r.rowsort = true
				case f == "nosort":
				case f == "changelog":
					r.applied = true
				case strings.HasPrefix(f, "mat="):
					r.mat, _ = strconv.Atoi(strings.TrimPrefix(f, "mat="))
				default:
					t.Fatalf("%s:%d: unknown query option %q", path, lineNo, f)
				}
			}
		default:
			t.Fatalf("%s:%d: unknown directive %q", path, lineNo, l)
		}
		var sqlLines []string
		inResult := false
		for {
			l, ok := next()
			if !ok || strings.TrimSpace(l) == "" {
				break
			}
			if strings.TrimSpace(l) == "----" {
				inResult = true
				continue
			}
			if inResult {
				r.expected = append(r.expected, normRow(l))
			} else {
				sqlLines = append(sqlLines, l)
			}
		}
		r.sql = strings.Join(sqlLines, "\n")
		recs = append(recs, r)
	}
	return recs
}

func normRow(l string) string {
	parts := strings.Split(l, "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return strings.Join(parts, " | ")
}

// collectWriter formats result cells straight from Arrow (or rows for row
// batches) so reading the result never materialises a batch.
type collectWriter struct {
	schema *arrow.Schema
	rows   []string
}

func (w *collectWriter) Columns(s *arrow.Schema, bounded bool) error { w.schema = s; return nil }

func (w *collectWriter) Batch(b *exec.Batch) error {
	n := b.Len()
	for i := 0; i < n; i++ {
		cells := make([]string, len(w.schema.Fields()))
		for c := range cells {
			var v any
			if b.IsColumnar() {
				v = exec.Value(b.Record().Column(c), i)
			} else {
				v = b.Rows()[i][c]
			}
			cells[c] = expr.FormatValue(v, w.schema.Field(c).Type)
		}
		w.rows = append(w.rows, strings.Join(cells, " | "))
	}
	return nil
}

type sltMode struct {
	name       string
	env        string // set to "1", or to val
	columnarOn bool
	val        string
}

var sltModes = []sltMode{
	{"columnar", "", true, ""},
	{"row", "CLINK_DISABLE_COLUMNAR", false, ""},
	{"row-output", "CLINK_DISABLE_COLUMNAR_OUTPUT", true, ""},
	// Scans without late materialisation or page and dictionary pruning:
	// whole row groups, every row, as before the scan was given the WHERE.
	{"late-off", "CLINK_DISABLE_LATE_MATERIALIZATION", true, ""},
	// The others run with the exchange's blocks poisoned (main_test.go);
	// this one with the plain recycling a query gets.
	{"recycle-plain", "CLINK_SHUFFLE_RECYCLE", true, "on"},
}

func TestSQLLogic(t *testing.T) {
	files, err := filepath.Glob("../testdata/sql/*.slt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sqllogictest files found: %v", err)
	}
	data := t.TempDir()
	writeFixtures(t, data)
	for _, mode := range sltModes {
		t.Run(mode.name, func(t *testing.T) {
			if mode.env != "" {
				v := mode.val
				if v == "" {
					v = "1"
				}
				t.Setenv(mode.env, v)
			}
			// Results must not depend on the parallelism either.
			for _, par := range []int{1, 2, 3, 4} {
				for _, f := range files {
					t.Run(fmt.Sprintf("p%d/%s", par, filepath.Base(f)), func(t *testing.T) { runSLT(t, f, data, mode, par) })
				}
			}
		})
	}
}

func runSLT(t *testing.T, path, data string, mode sltMode, parallelism int) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	defer s.Close()
	if _, err := s.Execute(context.Background(), fmt.Sprintf("SET 'parallelism' = '%d'", parallelism), nil, ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range parseSLT(t, path, data) {
		where := fmt.Sprintf("%s:%d", filepath.Base(path), r.line)
		w := &collectWriter{}
		before := exec.Global.BatchesMaterialized.Load()
		_, err := s.Execute(context.Background(), r.sql, w, ExecOptions{})
		mat := exec.Global.BatchesMaterialized.Load() - before
		if r.errRe != "" {
			if err == nil {
				t.Errorf("%s: expected an error matching %q, got success", where, r.errRe)
			} else if !regexp.MustCompile(r.errRe).MatchString(err.Error()) {
				t.Errorf("%s: error %q does not match %q", where, err.Error(), r.errRe)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %s\n%v", where, r.sql, err)
			continue
		}
		if r.kind != "query" {
			continue
		}
		got := w.rows
		want := r.expected
		if r.applied {
			if got, err = applySLTChangelog(got); err != nil {
				t.Errorf("%s: %s\n%v", where, r.sql, err)
				continue
			}
		}
		if r.rowsort {
			got = append([]string(nil), got...)
			want = append([]string(nil), want...)
			sort.Strings(got)
			sort.Strings(want)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: %s\n--- got\n%s\n--- want\n%s", where, r.sql, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if r.mat >= 0 {
			if mode.columnarOn && mat != int64(r.mat) {
				t.Errorf("%s: %d batches materialised, want %d (columnar path did not fire)", where, mat, r.mat)
			}
			if !mode.columnarOn && mat == 0 {
				t.Errorf("%s: no batch materialised with columnar off: the switch did not force the row path", where)
			}
		}
	}
}

// applySLTChangelog applies formatted changelog rows ("+I | a | b") and
// returns the rows left, without their kind, through the table every
// display of a changelog uses.
func applySLTChangelog(rows []string) ([]string, error) {
	table := changelog.NewTable(nil, nil)
	for i, r := range rows {
		op, rest, _ := strings.Cut(r, " | ")
		if err := table.Apply(op, exec.Row{rest}); err != nil {
			return nil, fmt.Errorf("change %d (%s): %w", i, r, err)
		}
	}
	var out []string
	for _, r := range table.Rows(-1) {
		out = append(out, r[0].(string))
	}
	return out, nil
}
