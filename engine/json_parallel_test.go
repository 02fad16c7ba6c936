package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestJSONParallelSharedPieces runs queries over NDJSON files at
// parallelism 1 to 4, with pieces small enough (CLINK_JSON_PIECE_BYTES)
// that every part of the split scan takes several from the shared queue;
// the answers must not depend on the parallelism, for the columnar and
// the row decode, and EXPLAIN shows how many pieces the scan read.
func TestJSONParallelSharedPieces(t *testing.T) {
	dir := t.TempDir()
	var count, sum int64
	groups := map[string]int64{}
	for f := 0; f < 3; f++ {
		var sb strings.Builder
		for i := 0; i < 700; i++ {
			id := int64(f*1000 + i)
			g := fmt.Sprintf("g%d", id%7)
			pad := strings.Repeat("p", int(id*31%200))
			if i%101 == 5 {
				pad = strings.Repeat("L", 3000) // longer than a piece
			}
			fmt.Fprintf(&sb, `{"id": %d, "g": "%s", "pad": "%s"}`, id, g, pad)
			if f != 2 || i != 699 {
				sb.WriteString("\n") // the last file has no final newline
			}
			if i%250 == 0 {
				sb.WriteString("\n")
			}
			count++
			sum += id
			groups[g]++
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.json", f)), []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "part-3.json"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	const pieceBytes = 2048
	t.Setenv("CLINK_JSON_PIECE_BYTES", strconv.Itoa(pieceBytes))
	var size int64
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		st, _ := os.Stat(filepath.Join(dir, e.Name()))
		size += (st.Size() + pieceBytes - 1) / pieceBytes * pieceBytes
	}
	wantPieces := size / pieceBytes
	wantAgg := fmt.Sprintf("%d | %d", count, sum)
	var wantGroups []string
	for i := 0; i < 7; i++ {
		wantGroups = append(wantGroups, fmt.Sprintf("g%d | %d", i, groups[fmt.Sprintf("g%d", i)]))
	}
	piecesRE := regexp.MustCompile(`file pieces: (\d+)`)
	for _, columnar := range []string{"true", "false"} {
		for par := 1; par <= 4; par++ {
			t.Run(fmt.Sprintf("columnar-decode=%s/p%d", columnar, par), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
				defer s.Close()
				mustExec(t, s, fmt.Sprintf("SET 'parallelism' = '%d'", par),
					fmt.Sprintf("CREATE TABLE j (id BIGINT, g VARCHAR, pad VARCHAR) WITH ('connector' = 'filesystem', 'format' = 'json', 'path' = '%s', 'json.columnar-decode' = '%s')", dir, columnar))
				run := func(q string) []string {
					w := &collectWriter{}
					if _, err := s.Execute(context.Background(), q, w, ExecOptions{}); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
					return w.rows
				}
				if got := run("SELECT COUNT(*), SUM(id) FROM j"); strings.Join(got, "\n") != wantAgg {
					t.Errorf("COUNT, SUM at parallelism %d: %v, want %s", par, got, wantAgg)
				}
				if got := run("SELECT g, COUNT(*) FROM j GROUP BY g ORDER BY g"); strings.Join(got, "\n") != strings.Join(wantGroups, "\n") {
					t.Errorf("GROUP BY at parallelism %d:\n%s\nwant\n%s", par, strings.Join(got, "\n"), strings.Join(wantGroups, "\n"))
				}
				if got := run("SELECT id FROM j WHERE id < 1000 LIMIT 5"); len(got) != 5 {
					t.Errorf("LIMIT 5 at parallelism %d: %d rows", par, len(got))
				}
				o, err := s.Execute(context.Background(), "EXPLAIN (VERBOSE) ANALYZE SELECT COUNT(*) FROM j", nil, ExecOptions{})
				if err != nil {
					t.Fatal(err)
				}
				m := piecesRE.FindStringSubmatch(o.Text)
				if par == 1 {
					if m != nil {
						t.Errorf("one part needs no pieces, but EXPLAIN says %s", m[0])
					}
					return
				}
				if m == nil || m[1] != strconv.FormatInt(wantPieces, 10) || wantPieces < int64(4*par) {
					t.Errorf("EXPLAIN at parallelism %d: %v, want file pieces: %d (several per part)\n%s", par, m, wantPieces, o.Text)
				}
			})
		}
	}
}
