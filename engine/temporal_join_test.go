package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Flink's currency example: orders joined with the rate valid at each
// order's time, from a versioned rates table (PRIMARY KEY, WATERMARK).
// The expectation is computed here from the same rows.
func TestVersionedTemporalJoin(t *testing.T) {
	dir := t.TempDir()
	type rate struct {
		cur  string
		rate int64
		sec  int
	}
	rates := []rate{{"EUR", 100, 0}, {"USD", 90, 0}, {"EUR", 110, 10}, {"EUR", 120, 20}, {"USD", 95, 15}, {"EUR", 130, 40}}
	var rb, ob strings.Builder
	for _, r := range rates {
		fmt.Fprintf(&rb, `{"cur": "%s", "rate": %d, "ts": "2026-01-01 00:00:%02d"}`+"\n", r.cur, r.rate, r.sec)
	}
	type order struct {
		id  int64
		cur string
		sec int
	}
	var orders []order
	for i := 0; i < 60; i++ {
		o := order{int64(i), []string{"EUR", "USD", "GBP"}[i%3], i % 45}
		orders = append(orders, o)
		fmt.Fprintf(&ob, `{"id": %d, "cur": "%s", "ts": "2026-01-01 00:00:%02d"}`+"\n", o.id, o.cur, o.sec)
	}
	for name, text := range map[string]string{"rates.json": rb.String(), "orders.json": ob.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, join := range []string{"JOIN", "LEFT JOIN"} {
		for _, par := range []string{"1", "2"} {
			t.Run(join+"/parallelism="+par, func(t *testing.T) {
				s := NewSession(SessionOptions{NoDemoCatalog: true})
				defer s.Close()
				mustExec(t, s, "SET 'parallelism' = '"+par+"'", "SET 'execution.runtime-mode' = 'streaming'",
					fmt.Sprintf("CREATE TABLE rates (cur VARCHAR, rate BIGINT, ts TIMESTAMP(3), PRIMARY KEY (cur) NOT ENFORCED, "+
						"WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json')", filepath.Join(dir, "rates.json")),
					fmt.Sprintf("CREATE TABLE orders (id BIGINT, cur VARCHAR, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "+
						"WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json')", filepath.Join(dir, "orders.json")))
				q := "SELECT o.id, o.cur, r.rate FROM orders AS o " + join + " rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur"
				plan := strings.Join(explainLines(t, s, "EXPLAIN "+q), "\n")
				if !strings.Contains(plan, "TemporalJoin") {
					t.Fatalf("no TemporalJoin:\n%s", plan)
				}
				var got []string
				for _, r := range runRows(t, s, q) {
					got = append(got, fmt.Sprint(r[0], " ", r[1], " ", r[2]))
				}
				var want []string
				for _, o := range orders {
					var best *rate
					for i := range rates {
						if r := &rates[i]; r.cur == o.cur && r.sec <= o.sec && (best == nil || r.sec > best.sec) {
							best = r
						}
					}
					switch {
					case best != nil:
						want = append(want, fmt.Sprint(o.id, " ", o.cur, " ", best.rate))
					case join == "LEFT JOIN":
						want = append(want, fmt.Sprint(o.id, " ", o.cur, " <nil>"))
					}
				}
				sort.Strings(got)
				sort.Strings(want)
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("got %d rows, want %d:\n%s\nwant\n%s", len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			})
		}
	}
	s := NewSession(SessionOptions{NoDemoCatalog: true})
	defer s.Close()
	mustExec(t, s, fmt.Sprintf("CREATE TABLE nopk (cur VARCHAR, rate BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "+
		"WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json')", filepath.Join(dir, "rates.json")),
		fmt.Sprintf("CREATE TABLE orders (id BIGINT, cur VARCHAR, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "+
			"WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json')", filepath.Join(dir, "orders.json")),
		fmt.Sprintf("CREATE TABLE rates (cur VARCHAR, rate BIGINT, ts TIMESTAMP(3), PRIMARY KEY (cur) NOT ENFORCED, "+
			"WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json')", filepath.Join(dir, "rates.json")))
	for q, want := range map[string]string{
		"SELECT * FROM orders o JOIN nopk FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur":  "is not a versioned table",
		"SELECT * FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.id = r.rate": "PRIMARY KEY column 'cur' equated",
	} {
		_, err := s.Execute(context.Background(), q, &rowsWriter{}, ExecOptions{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s\n  error %v, want %q", q, err, want)
		}
	}
}
