package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// writeJoinFiles writes a probe file of 20000 rows in 4 row groups (so a
// parallel scan splits it) and a build file of 1200 rows: duplicate build
// keys, NULL keys on both sides, probe keys without a match and build keys
// no probe row has.
func writeJoinFiles(t *testing.T) (probe, build string) {
	dir := t.TempDir()
	probe, build = filepath.Join(dir, "probe.parquet"), filepath.Join(dir, "build.parquet")
	ps := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	rows := make([]exec.Row, 20000)
	for i := range rows {
		var k any = int64(i*7919) % 1300 // 1000-1299 have no build row
		if i%97 == 5 {
			k = nil
		}
		rows[i] = exec.Row{k, int64(i % 113)}
	}
	writeParquet(t, probe, ps, rows, 5000)
	bs := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "cat", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	rows = make([]exec.Row, 1200)
	for i := range rows {
		var id any = int64(i % 1100) // 0-99 twice; 1000-1099 match no probe... and some do
		if i%250 == 7 {
			id = nil
		}
		var cat any = fmt.Sprint("c", i%6)
		if i%11 == 0 {
			cat = nil
		}
		rows[i] = exec.Row{id, cat}
	}
	writeParquet(t, build, bs, rows, 1200)
	return probe, build
}

// A parallel batch join with a small Parquet build side broadcasts it to
// every probe subtask (INNER, LEFT): the results equal parallelism 1, the
// keyed plan (broadcast-rows 0) and the row path, no batch is
// materialised, and EXPLAIN says which plan ran. RIGHT and FULL joins,
// whose unmatched build rows no single subtask can decide, stay keyed.
func TestBroadcastJoin(t *testing.T) {
	probe, build := writeJoinFiles(t)
	queries := []struct {
		q         string
		broadcast bool
	}{
		{"SELECT b.cat, COUNT(*), SUM(p.v), COUNT(b.id) FROM '%[1]s' AS p JOIN '%[2]s' AS b ON p.k = b.id GROUP BY b.cat", true},
		{"SELECT p.k, p.v, b.cat FROM '%[1]s' AS p LEFT JOIN '%[2]s' AS b ON p.k = b.id WHERE p.v < 3", true},
		{"SELECT COUNT(*), COUNT(b.id), SUM(p.v) FROM '%[1]s' AS p LEFT JOIN '%[2]s' AS b ON p.k = b.id", true},
		{"SELECT b.id, b.cat, COUNT(p.v) FROM '%[1]s' AS p RIGHT JOIN '%[2]s' AS b ON p.k = b.id GROUP BY b.id, b.cat", false},
		{"SELECT COUNT(*), COUNT(p.k), COUNT(b.id) FROM '%[1]s' AS p FULL JOIN '%[2]s' AS b ON p.k = b.id", false},
	}
	ctx := context.Background()
	for _, qc := range queries {
		q := fmt.Sprintf(qc.q, probe, build)
		var want string
		for _, run := range []struct {
			par       int
			sets      []string
			broadcast bool
		}{
			{1, nil, false},
			{1, []string{"SET 'columnar' = 'off'"}, false},
			{2, nil, qc.broadcast},
			{3, nil, qc.broadcast},
			{4, nil, qc.broadcast},
			{2, []string{"SET 'columnar' = 'off'"}, qc.broadcast},
			{2, []string{"SET 'parallelism.broadcast-rows' = '0'"}, false},
			{3, []string{"SET 'parallelism.broadcast-rows' = '1199'"}, false}, // the build side has 1200 rows
		} {
			name := fmt.Sprintf("%s (parallelism %d, %v)", q, run.par, run.sets)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
			for _, st := range append([]string{fmt.Sprintf("SET 'parallelism' = '%d'", run.par)}, run.sets...) {
				if _, err := s.Execute(ctx, st, nil, ExecOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			w := &textWriter{}
			if _, err := s.Execute(ctx, q, w, ExecOptions{}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got := sortLines(w.sb.String())
			if want == "" {
				want = got
				if strings.Count(want, "\n") < 1 {
					t.Fatalf("%s: no rows", name)
				}
			} else if got != want {
				t.Errorf("%s:\n%s\nwant\n%s", name, head(got), head(want))
			}
			o, err := s.Execute(ctx, "EXPLAIN ANALYZE "+q, nil, ExecOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wantLine := fmt.Sprintf("build side (1200 rows) broadcast to %d subtasks", run.par)
			if got := strings.Contains(o.Text, wantLine); got != run.broadcast {
				t.Errorf("%s: broadcast %v, want %v:\n%s", name, got, run.broadcast, o.Text)
			}
			if run.broadcast && strings.Contains(o.Text, "Exchange hash(id)") {
				t.Errorf("%s: a broadcast join still shuffles its build side:\n%s", name, o.Text)
			}
			if len(run.sets) == 0 && o.Explain.Totals.BatchesMaterialized != 0 {
				t.Errorf("%s: %d batches materialised:\n%s", name, o.Explain.Totals.BatchesMaterialized, o.Text)
			}
			s.Close()
			mem.AssertSize(t, 0)
		}
	}
}

// A bad 'parallelism.broadcast-rows' is refused, naming the setting and
// what it takes, and leaves the setting as it was.
func TestBroadcastRowsSetting(t *testing.T) {
	ctx := context.Background()
	s := NewSession(SessionOptions{NoDemoCatalog: true})
	defer s.Close()
	if _, err := s.Execute(ctx, "SET 'parallelism.broadcast-rows' = '5000'", nil, ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"-1", "lots", "1e6", ""} {
		_, err := s.Execute(ctx, "SET 'parallelism.broadcast-rows' = '"+v+"'", nil, ExecOptions{})
		if err == nil || !strings.Contains(err.Error(), "'parallelism.broadcast-rows'") || !strings.Contains(err.Error(), "want a whole number of rows") {
			t.Errorf("SET broadcast-rows = %q: %v", v, err)
		}
	}
	if got := s.Settings()["parallelism.broadcast-rows"]; got != "5000" {
		t.Errorf("after refused SETs the setting is %q, want 5000", got)
	}
}
