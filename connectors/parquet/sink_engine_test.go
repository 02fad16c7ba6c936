package parquet_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/connectors/parquet"
	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
)

// INSERT INTO a filesystem/parquet table through the engine, as a user
// would: the written files read back through the same engine equal the
// source query's rows.

const fixtureDir = "../../testdata/parquet/"

// rowsWriter is an engine.ResultWriter keeping each row rendered as text.
// It reads a columnar batch's record directly, so it does not count as a
// materialisation.
type rowsWriter struct {
	schema *arrow.Schema
	rows   []string
}

func (w *rowsWriter) Columns(s *arrow.Schema, bounded bool) error { w.schema = s; return nil }

func (w *rowsWriter) Batch(b *exec.Batch) error {
	var rows []exec.Row
	if b.IsColumnar() {
		rows = exec.DecodeRows(b.Record())
	} else {
		rows = b.Rows()
	}
	for _, r := range rows {
		cells := make([]string, len(r))
		for c, v := range r {
			cells[c] = expr.FormatValue(v, w.schema.Field(c).Type)
		}
		w.rows = append(w.rows, strings.Join(cells, " | "))
	}
	return nil
}

type session struct {
	t   *testing.T
	s   *engine.Session
	mem *memory.CheckedAllocator
}

func newSession(t *testing.T) *session {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	return &session{t: t, s: engine.NewSession(engine.SessionOptions{Mem: mem, NoDemoCatalog: true}), mem: mem}
}

func (s *session) exec(stmt string) engine.Outcome {
	s.t.Helper()
	out, err := s.s.Execute(context.Background(), stmt, nil, engine.ExecOptions{})
	if err != nil {
		s.t.Fatalf("%s: %v", stmt, err)
	}
	return out
}

// query returns the rows of q, sorted (a scan of a directory reads its
// files in name order, which is not insertion order).
func (s *session) query(q string) []string {
	s.t.Helper()
	w := &rowsWriter{}
	if _, err := s.s.Execute(context.Background(), q, w, engine.ExecOptions{}); err != nil {
		s.t.Fatalf("%s: %v", q, err)
	}
	slices.Sort(w.rows)
	return w.rows
}

// sinkTable creates a filesystem/parquet table and points its Arrow memory
// at the session's checked allocator.
func (s *session) sinkTable(name, cols, path string) *parquet.Dataset {
	s.t.Helper()
	s.exec(fmt.Sprintf("CREATE TABLE %s (%s) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'parquet')", name, cols, path))
	e, ok := s.s.Catalog().Lookup(name)
	if !ok {
		s.t.Fatalf("table %s not in the catalog", name)
	}
	d, ok := e.Table.(*parquet.Dataset)
	if !ok {
		s.t.Fatalf("table %s is a %T, want *parquet.Dataset", name, e.Table)
	}
	return d.WithAllocator(s.mem)
}

// insert runs an INSERT and checks, when columnar, that it decoded no batch
// into rows anywhere (source to sink).
func (s *session) insert(stmt string, wantRows int64, columnar bool) {
	s.t.Helper()
	before := exec.Global.BatchesMaterialized.Load()
	out := s.exec(stmt)
	mat := exec.Global.BatchesMaterialized.Load() - before
	if columnar && mat != 0 {
		s.t.Errorf("%s: %d batch materialisations, want 0", stmt, mat)
	}
	if !columnar && mat == 0 {
		// The row path decodes: that the columnar run did not is the
		// columnar hook's doing.
		s.t.Errorf("%s: no batch materialised with columnar off", stmt)
	}
	if want := fmt.Sprintf("%d row(s) inserted", wantRows); !strings.Contains(out.Message, want) {
		s.t.Errorf("%s: %q, want %q", stmt, out.Message, want)
	}
}

func sameResult(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: row %d\n got %s\nwant %s", what, i, got[i], want[i])
		}
	}
}

func parquetFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const bidCols = "auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR"

func TestInsertFromNexmark(t *testing.T) {
	for _, columnar := range []bool{true, false} {
		t.Run(fmt.Sprintf("columnar=%v", columnar), func(t *testing.T) {
			s := newSession(t)
			defer s.mem.AssertSize(t, 0)
			if !columnar {
				s.exec("SET 'columnar' = 'off'")
			}
			s.exec("CREATE TABLE bid WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '30000', 'batch.size' = '1000')")
			dir := filepath.Join(t.TempDir(), "bids")
			s.sinkTable("out", bidCols, dir)

			// Before any INSERT the table reads as empty.
			if got := s.query("SELECT COUNT(*) FROM out"); len(got) != 1 || got[0] != "0" {
				t.Fatalf("empty sink table: %v", got)
			}
			want := s.query("SELECT * FROM bid")
			s.insert("INSERT INTO out SELECT * FROM bid", int64(len(want)), columnar)
			sameResult(t, "SELECT * FROM out", s.query("SELECT * FROM out"), want)

			// A second INSERT adds a file; the table reads both.
			hot := s.query("SELECT * FROM bid WHERE price > 5000000")
			s.insert("INSERT INTO out SELECT * FROM bid WHERE price > 5000000", int64(len(hot)), columnar)
			files := parquetFiles(t, dir)
			if len(files) != 2 {
				t.Fatalf("directory holds %v, want two part files", files)
			}
			all := slices.Concat(want, hot)
			slices.Sort(all)
			sameResult(t, "after two inserts", s.query("SELECT * FROM out"), all)
			// The written files as a path query, too.
			sameResult(t, "path query", s.query(fmt.Sprintf("SELECT * FROM '%s/*.parquet'", dir)), all)
		})
	}
}

// TestInsertCoerces: columns match by position, not name, and are widened
// to the table's types.
func TestInsertCoerces(t *testing.T) {
	s := newSession(t)
	defer s.mem.AssertSize(t, 0)
	s.exec("CREATE TABLE bid WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '5000')")
	file := filepath.Join(t.TempDir(), "prices.parquet")
	s.sinkTable("prices", "p DOUBLE, a BIGINT, c VARCHAR", file)
	want := s.query("SELECT CAST(price AS DOUBLE), auction, channel FROM bid")
	s.insert("INSERT INTO prices SELECT price, auction, channel FROM bid", int64(len(want)), true)
	sameResult(t, "coerced", s.query("SELECT p, a, c FROM prices"), want)
	if files := parquetFiles(t, filepath.Dir(file)); len(files) != 1 || files[0] != file {
		t.Fatalf("wrote %v, want exactly %s", files, file)
	}
	// Too few columns, and a type that does not widen, are errors that
	// leave nothing behind.
	for _, stmt := range []string{
		"INSERT INTO prices SELECT price, auction FROM bid",
		"INSERT INTO prices SELECT channel, auction, channel FROM bid",
	} {
		if _, err := s.s.Execute(context.Background(), stmt, nil, engine.ExecOptions{}); err == nil {
			t.Errorf("%s: no error", stmt)
		}
	}
	// The file exists now: a second INSERT cannot append to it.
	_, err := s.s.Execute(context.Background(), "INSERT INTO prices SELECT price, auction, channel FROM bid", nil, engine.ExecOptions{})
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("insert into an existing file: %v", err)
	}
}

// TestInsertFromParquet copies a DuckDB-written file (every type) and reads
// the copy back.
func TestInsertFromParquet(t *testing.T) {
	s := newSession(t)
	defer s.mem.AssertSize(t, 0)
	src := fixtureDir + "duckdb_types.parquet"
	dir := filepath.Join(t.TempDir(), "copy") + "/"
	s.sinkTable("copy", "id INT, b BOOLEAN, i8 INT, i16 INT, i32 INT, i64 BIGINT, u32 BIGINT, f32 FLOAT, f64 DOUBLE, "+
		"s VARCHAR, cat VARCHAR, bin BYTES, d4 DECIMAL(4, 1), d18 DECIMAL(18, 3), d38 DECIMAL(38, 10), "+
		"ts TIMESTAMP(6), ts_ms TIMESTAMP(3), ts_ns TIMESTAMP(9), dt DATE", dir)
	want := s.query(fmt.Sprintf("SELECT * FROM '%s'", src))
	s.insert(fmt.Sprintf("INSERT INTO copy SELECT * FROM '%s'", src), int64(len(want)), true)
	sameResult(t, "copy", s.query("SELECT * FROM copy"), want)
	sameResult(t, "aggregate", s.query("SELECT cat, COUNT(*), SUM(i64) FROM copy GROUP BY cat"),
		s.query(fmt.Sprintf("SELECT cat, COUNT(*), SUM(i64) FROM '%s' GROUP BY cat", src)))
}

// TestInsertStops: a LIMIT ends an unbounded INSERT normally and the file
// is committed; a cancelled INSERT leaves no file.
func TestInsertStops(t *testing.T) {
	s := newSession(t)
	defer s.mem.AssertSize(t, 0)
	s.exec("CREATE TABLE events WITH ('connector' = 'nexmark', 'table' = 'bid', 'batch.size' = '100')")
	dir := filepath.Join(t.TempDir(), "limited")
	s.sinkTable("limited", bidCols, dir)
	s.insert("INSERT INTO limited SELECT * FROM events LIMIT 250", 250, true)
	if got := s.query("SELECT COUNT(*) FROM limited"); got[0] != "250" {
		t.Fatalf("count after LIMIT 250: %v", got)
	}

	cdir := filepath.Join(t.TempDir(), "cancelled")
	d := s.sinkTable("cancelled", bidCols, cdir)
	ctx, cancel := context.WithCancel(context.Background())
	// Cancel once the sink has been handed rows, so the partial file
	// exists when the statement is cancelled.
	go func() {
		for ctx.Err() == nil {
			if ents, _ := os.ReadDir(cdir); len(ents) > 0 {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	_, err := s.s.Execute(ctx, "INSERT INTO cancelled SELECT * FROM events", nil, engine.ExecOptions{})
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled insert: error %v", err)
	}
	if files := parquetFiles(t, cdir); len(files) != 0 {
		t.Fatalf("a cancelled insert left %v", files)
	}
	if got := s.query("SELECT COUNT(*) FROM cancelled"); got[0] != "0" || !strings.Contains(d.Describe(), "no files yet") {
		t.Fatalf("after a cancelled insert: %v rows, %s", got, d.Describe())
	}
	if names, _ := os.ReadDir(cdir); len(names) != 0 {
		t.Fatalf("hidden files left: %v", names)
	}
}

// TestPathQueryFormat: SELECT ... FROM 'x.json' reaches the filesystem
// connector's 'json' format with the path (plan/bind.go openPath). Without
// a registered json format the error says so.
func TestPathQueryFormat(t *testing.T) {
	s := newSession(t)
	var seen []map[string]string
	restore := parquet.SwapFormat("json", func(options map[string]string, declared *arrow.Schema) (connectors.Table, error) {
		seen = append(seen, options)
		return parquet.OpenDataset(fixtureDir+"duckdb_groups.parquet", declared)
	})
	want := s.query(fmt.Sprintf("SELECT COUNT(*) FROM '%sduckdb_groups.parquet'", fixtureDir))
	for _, p := range []string{"events.json", "logs/a.ndjson", "logs/*.jsonl"} {
		got := s.query(fmt.Sprintf("SELECT COUNT(*) FROM '%s'", p))
		sameResult(t, p, got, want)
		if last := seen[len(seen)-1]; last["path"] != p || last["format"] != "json" {
			t.Fatalf("%s: the format saw %v", p, last)
		}
	}
	restore()

	// With the engine's own json format back, a missing file is an error
	// naming it.
	_, qerr := s.s.Execute(context.Background(), "SELECT * FROM 'x.json'", &rowsWriter{}, engine.ExecOptions{})
	if qerr == nil || !strings.Contains(qerr.Error(), "x.json") {
		t.Fatalf("path query of a missing json file: %v", qerr)
	}
}

// TestInsertParallel: a split scan (parallelism 2) feeding the sink, from
// a multi-row-group file and from a Dataset the sink itself wrote.
func TestInsertParallel(t *testing.T) {
	s := newSession(t)
	defer s.mem.AssertSize(t, 0)
	s.exec("SET 'parallelism' = '2'")
	src := fixtureDir + "duckdb_groups.parquet"
	s.exec(fmt.Sprintf("CREATE TABLE g WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'parquet')", src))
	e, _ := s.s.Catalog().Lookup("g")
	if _, ok := e.Table.(connectors.SplitTable); !ok {
		t.Fatalf("a filesystem table is a %T, not a connectors.SplitTable", e.Table)
	}
	var cols []string
	for _, f := range e.Table.Schema().Fields() {
		cols = append(cols, fmt.Sprintf("`%s` %s", f.Name, sqlType(f.Type)))
	}
	dir := filepath.Join(t.TempDir(), "g2")
	s.sinkTable("g2", strings.Join(cols, ", "), dir)
	want := s.query("SELECT * FROM g")
	s.insert("INSERT INTO g2 SELECT * FROM g", int64(len(want)), true)
	sameResult(t, "parallel copy", s.query("SELECT * FROM g2"), want)
}

func sqlType(t arrow.DataType) string {
	switch t.ID() {
	case arrow.INT32:
		return "INT"
	case arrow.INT64:
		return "BIGINT"
	case arrow.FLOAT64:
		return "DOUBLE"
	case arrow.STRING:
		return "VARCHAR"
	}
	return t.String()
}
