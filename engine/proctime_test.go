package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// A rate-limited nexmark bid stream (3000 events at 6000/s: it lasts at
// least half a second) with a PROCTIME() computed column; q12's shapes.
const procTimeBidDDL = "CREATE TABLE pb (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, " +
	"`dateTime` TIMESTAMP(3), extra VARCHAR, p AS PROCTIME()) " +
	"WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '3000', 'first-event.rate' = '6000', " +
	"'next-event.rate' = '6000', 'batch.size' = '100')"

// Processing-time windows count every row once, in windows of the wall
// clock: the per-window counts add up to the input, each window is the
// declared size, and a stream lasting half a second spans several 100 ms
// windows (a lower bound the rate limit guarantees, not a timing guess).
func TestProcTimeWindows(t *testing.T) {
	queries := map[string]string{
		"tvf computed column": "SELECT window_start, window_end, count(*) FROM TABLE(TUMBLE(TABLE pb, DESCRIPTOR(p), INTERVAL '0.1' SECOND)) GROUP BY window_start, window_end",
		"tvf view":            "SELECT window_start, window_end, count(*) FROM TABLE(TUMBLE(TABLE bv, DESCRIPTOR(p_time), INTERVAL '0.1' SECOND)) GROUP BY window_start, window_end",
		"legacy group window": "SELECT TUMBLE_START(p, INTERVAL '0.1' SECOND), TUMBLE_END(p, INTERVAL '0.1' SECOND), count(*) FROM pb GROUP BY TUMBLE(p, INTERVAL '0.1' SECOND)",
	}
	for name, q := range queries {
		for _, par := range []string{"1", "2"} {
			t.Run(name+"/parallelism="+par, func(t *testing.T) {
				s := NewSession(SessionOptions{NoDemoCatalog: true})
				defer s.Close()
				runRows(t, s, "SET 'parallelism' = '"+par+"'")
				runRows(t, s, procTimeBidDDL)
				runRows(t, s, "CREATE VIEW bv AS SELECT *, PROCTIME() AS p_time FROM pb")
				plan := strings.Join(explainLines(t, s, "EXPLAIN "+q), "\n")
				if !strings.Contains(plan, "ProcTimeWindowAggregate") || !strings.Contains(plan, "processing time") {
					t.Fatalf("plan has no processing-time window:\n%s", plan)
				}
				want := runRows(t, s, "SELECT count(*) FROM pb")[0][0].(int64) // the bids of the 3000 events
				rows := runRows(t, s, q)
				var total int64
				seen := map[int64]bool{}
				for _, r := range rows {
					start, end := int64(r[0].(arrow.Timestamp)), int64(r[1].(arrow.Timestamp))
					if end-start != 100 || start%100 != 0 {
						t.Errorf("window %d..%d is not an aligned 100 ms window", start, end)
					}
					if seen[start] {
						t.Errorf("window at %d fired twice", start)
					}
					seen[start] = true
					total += r[2].(int64)
				}
				if total != want {
					t.Errorf("windows count %d rows, want %d", total, want)
				}
				if len(rows) < 3 {
					t.Errorf("%d windows for a stream of at least 500 ms, want at least 3", len(rows))
				}
			})
		}
	}
}

// PROCTIME() is TIMESTAMP_LTZ(3) and reads the wall clock; SESSION
// windows over it are refused, naming what is supported.
func TestProcTimeErrors(t *testing.T) {
	s := NewSession(SessionOptions{NoDemoCatalog: true})
	defer s.Close()
	runRows(t, s, procTimeBidDDL)
	_, err := s.Execute(context.Background(), "SELECT count(*) FROM pb GROUP BY SESSION(p, INTERVAL '1' SECOND)", &rowsWriter{}, ExecOptions{})
	if err == nil || !strings.Contains(err.Error(), "SESSION windows over processing time are not supported") {
		t.Errorf("SESSION over PROCTIME: %v", err)
	}
	_, err = s.Execute(context.Background(), "SELECT PROCTIME(1)", &rowsWriter{}, ExecOptions{})
	if err == nil || !strings.Contains(err.Error(), "PROCTIME() takes no arguments") {
		t.Errorf("PROCTIME(1): %v", err)
	}
}
