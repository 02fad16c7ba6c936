package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestJSONRecordJudgedWhateverIsRead: over an NDJSON file whose bad records
// are bad only in one column, 'on-error' = 'skip' keeps the same records
// whichever columns a query reads (count(*) reads none), on the columnar
// and the row decode at parallelism 1 and 2; 'on-error' = 'fail' fails
// count(*) naming the file, the line and the column.
func TestJSONRecordJudgedWhateverIsRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mixed.json")
	var sb strings.Builder
	good, sum := 0, 0
	for i := 0; i < 300; i++ {
		price, ts := fmt.Sprintf("%d.5", i), `"2024-05-06 07:08:09"`
		bad := true
		switch i % 10 {
		case 3:
			price = `"cheap"`
		case 5:
			ts = `"not a time"`
		case 7:
			price = `1e999` // out of DOUBLE's range
		default:
			bad = false
		}
		fmt.Fprintf(&sb, `{"id": %d, "price": %s, "ts": %s, "tag": "t%d"}`+"\n", i, price, ts, i%4)
		if !bad {
			good++
			sum += i
		}
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ddl := "CREATE TABLE m (id BIGINT, price DOUBLE, ts TIMESTAMP, tag VARCHAR) WITH ('connector' = 'filesystem', " +
		"'format' = 'json', 'path' = '%s', 'on-error' = '%s', 'json.columnar-decode' = '%s')"
	for _, columnar := range []string{"true", "false"} {
		for par := 1; par <= 2; par++ {
			t.Run(fmt.Sprintf("columnar-decode=%s/p%d", columnar, par), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
				defer s.Close()
				mustExec(t, s, fmt.Sprintf("SET 'parallelism' = '%d'", par), fmt.Sprintf(ddl, path, "skip", columnar))
				run := func(q string) []string {
					w := &collectWriter{}
					if _, err := s.Execute(context.Background(), q, w, ExecOptions{}); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
					return w.rows
				}
				if rows := run("SELECT * FROM m"); len(rows) != good {
					t.Errorf("SELECT *: %d rows, want the %d good records", len(rows), good)
				}
				want := fmt.Sprint(good)
				for _, q := range []string{"SELECT count(*) FROM m", "SELECT count(id) FROM m", "SELECT count(tag) FROM m", "SELECT count(ts) FROM m"} {
					if got := run(q); strings.Join(got, "") != want {
						t.Errorf("%s: %v, want %s (the rows SELECT * returns)", q, got, want)
					}
				}
				if got := run("SELECT sum(id) FROM m"); strings.Join(got, "") != fmt.Sprint(sum) {
					t.Errorf("SELECT sum(id): %v, want %d", got, sum)
				}

				mustExec(t, s, "DROP TABLE m", "SET 'parallelism' = '1'", fmt.Sprintf(ddl, path, "fail", columnar))
				_, err := s.Execute(context.Background(), "SELECT count(*) FROM m", &collectWriter{}, ExecOptions{})
				// Line 4 is the first bad record (i = 3): its price.
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "line 4") || !strings.Contains(err.Error(), "'price'") {
					t.Errorf("on-error = fail: want an error naming %s, line 4 and column 'price', got %v", path, err)
				}
			})
		}
	}
}
