package engine

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// A regular or one-sided interval join pairs new rows with held rows of
// any age: its output carries no event time and only the final watermark,
// so an interval join after it drops nothing as late and answers as batch.
func TestStreamJoinOutputEventTime(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	defer s.Close()
	eventTables(t, s, 20000, 1)
	queries := map[string]string{
		"regular then interval join": "SELECT B.auction, B.price, P.id FROM (SELECT B.auction, B.price, A.seller, A.`dateTime` AS adt FROM bids B JOIN auctions A ON B.auction = A.id) B " +
			"JOIN persons P ON P.id = B.seller WHERE P.`dateTime` BETWEEN B.adt - INTERVAL '100' SECOND AND B.adt + INTERVAL '100' SECOND",
		"one-sided interval then interval join": "SELECT B.auction, B.price, P.id FROM (SELECT B.auction, B.price, A.seller, A.`dateTime` AS adt FROM bids B JOIN auctions A ON B.auction = A.id WHERE B.`dateTime` >= A.`dateTime`) B " +
			"JOIN persons P ON P.id = B.seller WHERE P.`dateTime` BETWEEN B.adt - INTERVAL '100' SECOND AND B.adt + INTERVAL '100' SECOND",
	}
	for name, q := range queries {
		t.Run(name, func(t *testing.T) {
			mustExec(t, s, "SET 'execution.runtime-mode' = 'batch'")
			want := canon(runRows(t, s, q))
			mustExec(t, s, "SET 'execution.runtime-mode' = 'streaming'")
			got := canon(runRows(t, s, q))
			plan := strings.Join(explainLines(t, s, "EXPLAIN ANALYZE VERBOSE "+q), "\n")
			t.Logf("batch %d rows, streaming %d rows, late rows dropped %d", len(want), len(got), counterIn(plan, "late rows dropped"))
			diff(t, name, got, want)
		})
	}
}

// A window over a bounded FULL JOIN counts the unmatched build rows, which
// come out at the probe's end: the join holds its watermark until then.
func TestFullJoinThenWindow(t *testing.T) {
	dir := t.TempDir()
	writeFixtures(t, dir)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	defer s.Close()
	for _, n := range []string{"ea", "eb"} {
		mustExec(t, s, "CREATE TABLE "+n+" (k VARCHAR, ts TIMESTAMP(3), v BIGINT, WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = '"+dir+"/events.parquet', 'format' = 'parquet')")
	}
	q := "SELECT COUNT(*) FROM (SELECT * FROM ea WHERE k = 'a') a FULL JOIN (SELECT * FROM eb WHERE k = 'b') b ON a.k = b.k WHERE 1=1 GROUP BY TUMBLE(b.ts, INTERVAL '100' SECOND)"
	bad := 0
	for i := 0; i < 20; i++ {
		got := canon(runRows(t, s, q))
		if len(got) != 1 || got[0] != "4" {
			bad++
			t.Logf("run %d: %v, want [4]", i, got)
		}
	}
	if bad > 0 {
		t.Errorf("%d of 20 runs lost the unmatched build rows", bad)
	}
}

// A LEFT join fed an updating aggregate emits, for one -U/+U, [-U pair,
// +I padded, -D padded, +U pair] in one batch; a join after it must keep
// that batch's rows although one retraction empties its chunk midway.
func TestChangelogThroughTwoJoins(t *testing.T) {
	dir := t.TempDir()
	writeFixtures(t, dir)
	var rows []exec.Row
	for i := 0; i < 16; i++ { // person 1 in every row group of 4: -U/+U in every aggregate batch
		rows = append(rows, exec.Row{int64(200 + i), int64(1 + i%4), "x", int32(1), dec(100)})
	}
	writeParquet(t, dir+"/orders.parquet", ordersSchema, rows, 4)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	defer s.Close()
	mustExec(t, s,
		"CREATE TABLE people WITH ('connector' = 'filesystem', 'path' = '"+dir+"/people.parquet', 'format' = 'parquet')",
		"CREATE TABLE orders WITH ('connector' = 'filesystem', 'path' = '"+dir+"/orders.parquet', 'format' = 'parquet')",
		"SET 'parallelism' = '1'")
	q := "SELECT x.id, x.c, o2.order_id FROM (SELECT p.id, a.c FROM people p LEFT JOIN (SELECT person_id, COUNT(*) AS c FROM orders GROUP BY person_id) a ON p.id = a.person_id) x " +
		"JOIN orders o2 ON x.id = o2.person_id"
	mustExec(t, s, "SET 'execution.runtime-mode' = 'batch'")
	want := canon(runRows(t, s, q))
	mustExec(t, s, "SET 'execution.runtime-mode' = 'streaming'")
	bad := 0
	for i := 0; i < 30; i++ {
		got := canon(applyOps(t, runRows(t, s, q)))
		if strings.Join(got, ";") != strings.Join(want, ";") {
			bad++
			if bad == 1 {
				t.Logf("run %d: got %v\nwant %v", i, got, want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of 30 streaming runs differ from batch", bad)
	}
}

// TestRightJoinOfChangelogs: RIGHT joins with a changelog on either or
// both sides (planned as LEFT joins with the inputs swapped, the columns put
// back) answer as batch, applied.
func TestRightJoinOfChangelogs(t *testing.T) {
	dir := t.TempDir()
	writeFixtures(t, dir)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	defer s.Close()
	mustExec(t, s,
		"CREATE TABLE people WITH ('connector' = 'filesystem', 'path' = '"+dir+"/people.parquet', 'format' = 'parquet')",
		"CREATE TABLE orders WITH ('connector' = 'filesystem', 'path' = '"+dir+"/orders.parquet', 'format' = 'parquet')")
	for _, q := range []string{
		"SELECT a.person_id, a.c, p.id, p.name FROM (SELECT person_id, COUNT(*) AS c FROM orders GROUP BY person_id) a RIGHT JOIN people p ON a.person_id = p.id",
		"SELECT p.id, p.name, a.person_id, a.c FROM people p RIGHT JOIN (SELECT person_id, COUNT(*) AS c FROM orders GROUP BY person_id) a ON a.person_id = p.id",
		"SELECT a.person_id, a.c, b.person_id, b.m FROM (SELECT person_id, COUNT(*) AS c FROM orders GROUP BY person_id) a RIGHT JOIN (SELECT person_id, MAX(order_id) AS m FROM orders GROUP BY person_id) b ON a.person_id = b.person_id",
	} {
		mustExec(t, s, "SET 'execution.runtime-mode' = 'batch'")
		want := canon(runRows(t, s, q))
		mustExec(t, s, "SET 'execution.runtime-mode' = 'streaming'")
		for i := 0; i < 5; i++ {
			diff(t, q, canon(applyOps(t, runRows(t, s, q))), want)
		}
	}
}
