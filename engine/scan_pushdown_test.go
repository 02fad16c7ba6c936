package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"

	"github.com/clink-sql/clink/exec"
)

// The WHERE pushed into Parquet scans (late materialisation, page and
// dictionary pruning) against the same queries with it switched off, on
// the row path, and at parallelism 1 to 3: the same answers, nothing
// materialised on the columnar runs, and EXPLAIN ANALYZE showing that the
// scan evaluated the predicate. Two answers are also checked against
// counts computed from the generator.

const pushRows = 40000

// pushRow is row i of the pushdown fixture: id sorted, grp's values differ
// per row group of 8192 (dictionary-encoded), url has "google" in about
// one row of 97, v is NULL in one of 11.
func pushRow(i int) exec.Row {
	url := fmt.Sprintf("https://site%d.example/page/%d?q=%s", i%50, i, strings.Repeat("a", i%23))
	if i%97 == 5 {
		url = fmt.Sprintf("https://www.google.com/search?q=%d", i)
	}
	var v any = int32((i * 37) % 1000)
	if i%11 == 0 {
		v = nil
	}
	var flag any = i%4 == 1
	if i%13 == 0 {
		flag = nil
	}
	return exec.Row{int64(i), fmt.Sprintf("g%d-%d", i/8192, i%4), url, v, dec(int64(i%5000) * 3), arrow.Timestamp(int64(pushRows-i)*1000 + int64(i%7)), flag}
}

var pushSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "grp", Type: arrow.BinaryTypes.String},
	{Name: "url", Type: arrow.BinaryTypes.String},
	{Name: "v", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "price", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}},
	{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
}, nil)

func writePushFile(t *testing.T, path string) {
	rows := make([]exec.Row, pushRows)
	for i := range rows {
		rows[i] = pushRow(i)
	}
	writeParquet(t, path, pushSchema, rows, 8192, parquet.WithDataPageSize(4<<10),
		parquet.WithDictionaryFor("url", false))
}

func TestScanPushdown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "push.parquet")
	writePushFile(t, path)
	var googles, googleV int64
	for i := 0; i < pushRows; i++ {
		r := pushRow(i)
		if strings.Contains(r[2].(string), "google") {
			googles++
			if r[3] != nil {
				googleV += int64(r[3].(int32))
			}
		}
	}
	queries := []struct {
		q      string
		pushed bool   // EXPLAIN names a predicate evaluated in the scan
		want   string // the answer, when computed here from pushRow
	}{
		{"SELECT * FROM '%s' WHERE url LIKE '%%google%%' ORDER BY ts LIMIT 10", true, ""},
		{"SELECT COUNT(*), SUM(v) FROM '%s' WHERE url LIKE '%%google%%'", true, fmt.Sprintf("%d %d\n", googles, googleV)},
		{"SELECT grp, COUNT(*), MIN(url) FROM '%s' WHERE url LIKE '%%google%%' AND v IS NOT NULL GROUP BY grp", true, ""},
		{"SELECT id, v, url FROM '%s' WHERE id BETWEEN 10000 AND 10100", true, ""},
		{"SELECT id, url, price FROM '%s' WHERE grp = 'g3-1'", true, ""},
		{"SELECT COUNT(*) FROM '%s' WHERE grp LIKE '%%-9'", false, "0\n"},
		{"SELECT id, flag, url FROM '%s' WHERE v IN (5, 37, 999) AND flag", true, ""},
		{"SELECT SUM(price), COUNT(*) FROM '%s' WHERE v > 500", true, ""},
		{"SELECT id, ts FROM '%s' WHERE v IS NULL AND id %% 3 = 0", true, ""},
		{"SELECT id, url, v FROM '%s' WHERE id < 100 OR url LIKE '%%google.com/search?q=3%%'", true, ""},
		{"SELECT a.id, b.url FROM '%[1]s' a JOIN '%[1]s' b ON a.id = b.id + 1 WHERE a.url LIKE '%%google%%' AND b.v < 100", true, ""},
		{"SELECT t.id, t.u FROM (SELECT id, upper(url) AS u, v FROM '%s') t WHERE t.u LIKE '%%GOOGLE%%' AND t.v > 900", true, ""},
	}
	ctx := context.Background()
	for _, qc := range queries {
		q := strings.ReplaceAll(qc.q, "%s", path)
		q = strings.ReplaceAll(strings.ReplaceAll(q, "%[1]s", path), "%%", "%")
		var want string
		for _, mode := range []string{"off", "row", "on"} {
			for _, par := range []int{1, 2, 3} {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
				sets := []string{fmt.Sprintf("SET 'parallelism' = '%d'", par)}
				switch mode {
				case "off":
					sets = append(sets, "SET 'scan.late-materialization' = 'off'")
				case "row":
					sets = append(sets, "SET 'columnar' = 'off'")
				}
				for _, st := range sets {
					if _, err := s.Execute(ctx, st, nil, ExecOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				w := &textWriter{}
				if _, err := s.Execute(ctx, q, w, ExecOptions{}); err != nil {
					t.Fatalf("%s (%s, parallelism %d): %v", q, mode, par, err)
				}
				got := sortLines(w.sb.String())
				switch {
				case want == "":
					want = got
					if qc.want != "" && got != qc.want {
						t.Errorf("%s: %q, want %q (from the generator)", q, got, qc.want)
					}
				case got != want:
					t.Errorf("%s (%s, parallelism %d):\n%s\nwant\n%s", q, mode, par, head(got), head(want))
				}
				if mode == "on" {
					o, err := s.Execute(ctx, "EXPLAIN ANALYZE "+q, nil, ExecOptions{})
					if err != nil {
						t.Fatal(err)
					}
					evaluated := strings.Contains(o.Text, "predicate evaluated in the scan: ") && strings.Contains(o.Text, "late materialisation: predicate on ")
					if evaluated != qc.pushed {
						t.Errorf("%s (parallelism %d): predicate evaluated in the scan: %v, want %v\n%s", q, par, evaluated, qc.pushed, o.Text)
					}
					if o.Explain.Totals.BatchesMaterialized != 0 {
						t.Errorf("%s: %d batches materialised:\n%s", q, o.Explain.Totals.BatchesMaterialized, o.Text)
					}
				}
				s.Close()
				mem.AssertSize(t, 0)
			}
		}
	}
}

// A volatile conjunct stays with the Filter: the scan evaluating it too
// would filter twice.
func TestScanPushdownVolatile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "push.parquet")
	writePushFile(t, path)
	s := NewSession(SessionOptions{NoDemoCatalog: true})
	defer s.Close()
	o, err := s.Execute(context.Background(), fmt.Sprintf("EXPLAIN SELECT id, url FROM '%s' WHERE id < 100 AND random() < 2.0", path), nil, ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	line := ""
	for _, l := range strings.Split(o.Text, "\n") {
		if strings.Contains(l, "predicate evaluated in the scan") {
			line = l
		}
	}
	if !strings.Contains(line, "(id < 100)") || strings.Contains(line, "random") {
		t.Fatalf("want only id < 100 evaluated in the scan:\n%s", o.Text)
	}
	if !strings.Contains(o.Text, "Filter ") || !strings.Contains(o.Text, "random()") {
		t.Fatalf("the Filter lost the volatile conjunct:\n%s", o.Text)
	}
}

// A predicate that fails on the data fails the query with the Filter's
// error, the same with the scan evaluating it and without.
func TestScanPushdownError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "push.parquet")
	writePushFile(t, path)
	q := fmt.Sprintf("SELECT id, v FROM '%s' WHERE CAST(url AS INT) > 3", path)
	var msgs []string
	for _, mode := range []string{"on", "off"} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
		// One subtask: with several, which row fails first is a race.
		for _, st := range []string{"SET 'parallelism' = '1'", "SET 'scan.late-materialization' = '" + mode + "'"} {
			if _, err := s.Execute(context.Background(), st, nil, ExecOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		_, err := s.Execute(context.Background(), q, &textWriter{}, ExecOptions{})
		if err == nil {
			t.Fatalf("%s (%s): no error", q, mode)
		}
		msgs = append(msgs, err.Error())
		s.Close()
		mem.AssertSize(t, 0)
	}
	if msgs[0] != msgs[1] {
		t.Fatalf("errors differ:\n on: %s\noff: %s", msgs[0], msgs[1])
	}
}
