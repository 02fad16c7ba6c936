package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// Windowed queries over the bounded nexmark generator, checked against an
// expectation computed in Go from the same rows read by a plain SELECT
// (the batch question, no windows), at parallelism 1 and 2, columnar and
// row paths.

const windowBidDDL = "CREATE TABLE b (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, " +
	"`dateTime` TIMESTAMP(3), extra VARCHAR, WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '1' SECOND) " +
	"WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '150000')"

type rowsWriter struct {
	rows  []exec.Row
	names []string
}

func (w *rowsWriter) Columns(s *arrow.Schema, _ bool) error {
	w.names = w.names[:0]
	for _, f := range s.Fields() {
		w.names = append(w.names, f.Name)
	}
	return nil
}
func (w *rowsWriter) Batch(b *exec.Batch) error {
	w.rows = append(w.rows, b.Rows()...)
	return nil
}

func runRows(t *testing.T, s *Session, q string) []exec.Row {
	t.Helper()
	w := &rowsWriter{}
	if _, err := s.Execute(context.Background(), q, w, ExecOptions{}); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return w.rows
}

// bidRow is one bid of the plain read: auction, bidder, price, time (ms).
type bidRow struct{ auction, bidder, price, ms int64 }

func plainBids(t *testing.T, s *Session) []bidRow {
	var out []bidRow
	for _, r := range runRows(t, s, "SELECT auction, bidder, price, `dateTime` FROM b") {
		out = append(out, bidRow{r[0].(int64), r[1].(int64), r[2].(int64), int64(r[3].(arrow.Timestamp))})
	}
	return out
}

// canon renders result rows sorted, for comparison.
func canon(rows []exec.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		parts := make([]string, len(r))
		for j, v := range r {
			if ts, ok := v.(arrow.Timestamp); ok {
				v = int64(ts)
			}
			parts[j] = fmt.Sprint(v)
		}
		out[i] = strings.Join(parts, "|")
	}
	sort.Strings(out)
	return out
}

type winAcc struct{ n, sum int64 }

func expectRows(m map[[2]int64]*winAcc, size int64) []string {
	var rows []exec.Row
	for k, a := range m {
		rows = append(rows, exec.Row{k[0], k[1], k[1] + size, a.n, a.sum})
	}
	return canon(rows)
}

func diff(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: row %d = %s, want %s", what, i, got[i], want[i])
		}
	}
}

func floorMs(v, step int64) int64 {
	q := v / step
	if v%step < 0 {
		q--
	}
	return q * step
}

func TestWindowsNexmarkAgainstBatch(t *testing.T) {
	for _, mode := range []struct{ name, env string }{{"columnar", ""}, {"row", "CLINK_DISABLE_COLUMNAR"}, {"row-output", "CLINK_DISABLE_COLUMNAR_OUTPUT"}} {
		for _, par := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/p%d", mode.name, par), func(t *testing.T) {
				if mode.env != "" {
					t.Setenv(mode.env, "1")
				}
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
				defer s.Close()
				runRows(t, s, fmt.Sprintf("SET 'parallelism' = '%d'", par))
				runRows(t, s, windowBidDDL)
				bids := plainBids(t, s)
				if len(bids) < 100000 {
					t.Fatalf("only %d bids", len(bids))
				}

				// TUMBLE 1s per auction.
				tum := map[[2]int64]*winAcc{}
				for _, b := range bids {
					k := [2]int64{b.auction, floorMs(b.ms, 1000)}
					if tum[k] == nil {
						tum[k] = &winAcc{}
					}
					tum[k].n++
					tum[k].sum += b.price
				}
				got := runRows(t, s, "SELECT auction, window_start, window_end, COUNT(*), SUM(price) FROM TABLE(TUMBLE(TABLE b, "+
					"DESCRIPTOR(`dateTime`), INTERVAL '1' SECOND)) GROUP BY auction, window_start, window_end")
				diff(t, "tumble", canon(got), expectRows(tum, 1000))
				legacy := runRows(t, s, "SELECT auction, TUMBLE_START(`dateTime`, INTERVAL '1' SECOND), TUMBLE_END(`dateTime`, INTERVAL '1' SECOND), "+
					"COUNT(*), SUM(price) FROM b GROUP BY auction, TUMBLE(`dateTime`, INTERVAL '1' SECOND)")
				diff(t, "legacy tumble", canon(legacy), expectRows(tum, 1000))

				// HOP: 2s windows every 500ms (q5's shape), per auction.
				hop := map[[2]int64]*winAcc{}
				for _, b := range bids {
					for st := floorMs(b.ms, 500); st > b.ms-2000; st -= 500 {
						k := [2]int64{b.auction, st}
						if hop[k] == nil {
							hop[k] = &winAcc{}
						}
						hop[k].n++
						hop[k].sum += b.price
					}
				}
				got = runRows(t, s, "SELECT auction, window_start, window_end, COUNT(*), SUM(price) FROM TABLE(HOP(TABLE b, "+
					"DESCRIPTOR(`dateTime`), INTERVAL '500' MILLISECOND, INTERVAL '2' SECOND)) GROUP BY auction, window_start, window_end")
				diff(t, "hop", canon(got), expectRows(hop, 2000))

				// SESSION per bidder, 100ms gap (q11's shape).
				byBidder := map[int64][]bidRow{}
				for _, b := range bids {
					byBidder[b.bidder] = append(byBidder[b.bidder], b)
				}
				var want []exec.Row
				for bidder, bs := range byBidder {
					sort.Slice(bs, func(i, j int) bool { return bs[i].ms < bs[j].ms })
					for i := 0; i < len(bs); {
						j, sum := i+1, bs[i].price
						// Flink merges session windows [ts, ts+gap) that
						// touch (TimeWindow.intersects is inclusive): a
						// bid exactly 100 ms after the last joins it.
						for j < len(bs) && bs[j].ms-bs[j-1].ms <= 100 {
							sum += bs[j].price
							j++
						}
						want = append(want, exec.Row{bidder, int64(j - i), sum, bs[i].ms, bs[j-1].ms + 100})
						i = j
					}
				}
				got = runRows(t, s, "SELECT B.bidder, count(*), SUM(price), SESSION_START(B.`dateTime`, INTERVAL '100' MILLISECOND), "+
					"SESSION_END(B.`dateTime`, INTERVAL '100' MILLISECOND) FROM b B GROUP BY B.bidder, SESSION(B.`dateTime`, INTERVAL '100' MILLISECOND)")
				diff(t, "session", canon(got), canon(want))
			})
		}
	}
}

// The plan of a window query over a table with a WATERMARK has the
// assigner above the scan and the window aggregate (late-record dropping
// itself is tested on the operators, exec/ops/window_test.go).
func TestWindowPlanHasEventTimeOperators(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	defer s.Close()
	runRows(t, s, "SET 'parallelism' = '1'")
	runRows(t, s, windowBidDDL)
	out, err := s.Execute(context.Background(), "EXPLAIN ANALYZE SELECT COUNT(*) FROM TABLE(TUMBLE(TABLE b, DESCRIPTOR(`dateTime`), INTERVAL '1' SECOND)) GROUP BY window_start, window_end", nil, ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Text, "WatermarkAssigner") || !strings.Contains(out.Text, "WindowAggregate") {
		t.Fatalf("plan lacks the window operators:\n%s", out.Text)
	}
}
