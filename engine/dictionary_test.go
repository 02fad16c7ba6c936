package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"

	"github.com/clink-sql/clink/exec"
)

// writeDictFile writes n rows whose VARCHAR column ch has 40 values and
// NULLs, dictionary-encoded by the writer, with a dictionary page limit
// small enough that the last row group's chunk falls back to plain pages
// midway: a scan hands out codes for most batches and plain strings for
// the rest. name has 97 values.
func writeDictFile(t *testing.T, path string, n int) {
	schema, rows := dictRows(n)
	writeParquet(t, path, schema, rows, int64(n/3),
		parquet.WithDictionaryPageSizeLimit(32<<10), parquet.WithDataPageSize(4<<10))
}

// dictRows are writeDictFile's rows.
func dictRows(n int) (*arrow.Schema, []exec.Row) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "ch", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "price", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	rows := make([]exec.Row, n)
	for i := range rows {
		var ch any = fmt.Sprintf("channel-%02d", (i*7)%40)
		if i%13 == 5 {
			ch = nil
		}
		if i > n*2/3 && i%3 == 0 {
			// Many new values late in the file: the writer's dictionary
			// overflows and it falls back to plain pages.
			ch = fmt.Sprintf("late-%06d-%s", i, strings.Repeat("x", 40))
		}
		rows[i] = exec.Row{ch, int64(i % 1000), fmt.Sprintf("n%d", i%97)}
	}
	return schema, rows
}

var dictBatchesRE = regexp.MustCompile(`dictionary codes to GROUP BY keys and MIN/MAX: ([a-z, ]+) \((\d+) batch(?:es)? as codes, (\d+) plain\)`)

// A VARCHAR GROUP BY key read from Parquet travels as dictionary codes
// (EXPLAIN ANALYZE counts the batches), and every query gives the answer
// it gives with the codes switched off and on the row path, at
// parallelism 1 and 2, with nothing materialised on the columnar runs.
func TestDictionaryGroupByKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dict.parquet")
	writeDictFile(t, path, 30000)
	queries := []struct {
		q    string
		cols string // the columns EXPLAIN names as dictionary-encoded; "" for none
	}{
		{"SELECT ch, COUNT(*), SUM(price) FROM '%s' WHERE price > 100 GROUP BY ch", "ch"},
		{"SELECT ch, name, COUNT(*) FROM '%s' GROUP BY ch, name", "ch, name"},
		// The key is also read by a predicate and an aggregate: both decode.
		{"SELECT ch, MAX(ch), MIN(name), COUNT(*) FROM '%s' WHERE ch <> 'channel-07' AND ch LIKE 'c%%' GROUP BY ch", "ch, name"},
		// MIN/MAX without GROUP BY compare in the dictionary; a column
		// another aggregate reads stays plain.
		{"SELECT MAX(ch), MIN(ch), MAX(name), COUNT(*) FROM '%s' WHERE price > 10", "ch, name"},
		{"SELECT MAX(ch), COUNT(ch) FROM '%s'", ""},
		{"SELECT c2, COUNT(*) FROM (SELECT ch AS c2, price + 1 AS p FROM '%s' WHERE price %% 3 = 0) AS t WHERE p > 10 GROUP BY c2", "ch"},
		// A computed key is not a scan column: nothing to encode.
		{"SELECT upper(ch), COUNT(*) FROM '%s' GROUP BY upper(ch)", ""},
	}
	ctx := context.Background()
	for _, qc := range queries {
		q := fmt.Sprintf(qc.q, path)
		var want string
		for _, mode := range []string{"off", "row", "on"} {
			for _, par := range []int{1, 2} {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
				sets := []string{fmt.Sprintf("SET 'parallelism' = '%d'", par)}
				switch mode {
				case "off":
					sets = append(sets, "SET 'columnar.dictionary' = 'off'")
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
				if want == "" {
					want = got
					if strings.Count(want, "\n") < 1 {
						t.Fatalf("%s: only %q", q, want)
					}
				} else if got != want {
					t.Errorf("%s (%s, parallelism %d):\n%s\nwant\n%s", q, mode, par, head(got), head(want))
				}
				if mode == "on" {
					o, err := s.Execute(ctx, "EXPLAIN ANALYZE "+q, nil, ExecOptions{})
					if err != nil {
						t.Fatal(err)
					}
					m := dictBatchesRE.FindStringSubmatch(o.Text)
					switch {
					case qc.cols == "" && m != nil:
						t.Errorf("%s: codes for a computed key:\n%s", q, o.Text)
					case qc.cols != "" && m == nil:
						t.Errorf("%s (parallelism %d): no dictionary-encoded key:\n%s", q, par, o.Text)
					case m != nil:
						codes, _ := strconv.Atoi(m[2])
						plain, _ := strconv.Atoi(m[3])
						if m[1] != qc.cols || codes == 0 || plain == 0 {
							t.Errorf("%s: want codes and plain batches of %s (the last row group falls back), got %q", q, qc.cols, m[0])
						}
					}
					if o.Explain.Totals.BatchesMaterialized != 0 {
						t.Errorf("%s: %d batches materialised:\n%s", q, o.Explain.Totals.BatchesMaterialized, o.Text)
					}
				}
				mem.AssertSize(t, 0)
			}
		}
	}
}

func sortLines(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

func head(s string) string {
	if len(s) > 600 {
		return s[:600] + "..."
	}
	return s
}
