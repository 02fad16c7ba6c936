package engine

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/changelog"
)

// applyOps applies a changelog (row kind first) through the table every
// display of a changelog uses and returns the rows left, without their
// kind; a retraction of a row not in the table fails.
func applyOps(t *testing.T, rows []exec.Row) []exec.Row {
	t.Helper()
	table := changelog.NewTable(nil, nil)
	for i, r := range rows {
		if err := table.Apply(r[0], r[1:]); err != nil {
			t.Fatalf("change %d %v: %v", i, r, err)
		}
	}
	return table.Rows(-1)
}

// explainLines runs an EXPLAIN statement and returns its text lines.
func explainLines(t *testing.T, s *Session, q string) []string {
	t.Helper()
	o, err := s.Execute(context.Background(), q, nil, ExecOptions{})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return strings.Split(o.Text, "\n")
}

// counterIn sums the values of a named counter over an EXPLAIN ANALYZE
// text ("name: 123" or "name=123").
func counterIn(plan, name string) int64 {
	re := regexp.MustCompile(regexp.QuoteMeta(name) + `[:=] ?(\d+)`)
	var total int64
	for _, m := range re.FindAllStringSubmatch(plan, -1) {
		v, _ := strconv.ParseInt(m[1], 10, 64)
		total += v
	}
	return total
}

// TestStreamJoinEventTimeShapes runs Nexmark q7's interval join and q8's
// window join shapes (half-second windows, so windows close while the
// stream runs) planned as streams and as batch: the answers agree, the
// streaming join's state is bounded by event time, and nothing was
// dropped as late.
func TestStreamJoinEventTimeShapes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	defer s.Close()
	eventTables(t, s, 40000, 2)
	queries := map[string]string{
		"interval join (q7)": "SELECT B.auction, B.price, B.bidder, B.`dateTime` FROM bids B JOIN (" +
			"SELECT MAX(price) AS maxprice, window_end AS `dateTime` FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(`dateTime`), INTERVAL '500' MILLISECOND)) " +
			"GROUP BY window_start, window_end) B1 ON B.price = B1.maxprice " +
			"WHERE B.`dateTime` BETWEEN B1.`dateTime` - INTERVAL '500' MILLISECOND AND B1.`dateTime`",
		"window join (q8)": "SELECT P.id, P.name, P.starttime FROM (" +
			"SELECT id, name, window_start AS starttime, window_end AS endtime FROM TABLE(TUMBLE(TABLE persons, DESCRIPTOR(`dateTime`), INTERVAL '500' MILLISECOND)) " +
			"GROUP BY id, name, window_start, window_end) P JOIN (" +
			"SELECT seller, window_start AS starttime, window_end AS endtime FROM TABLE(TUMBLE(TABLE auctions, DESCRIPTOR(`dateTime`), INTERVAL '500' MILLISECOND)) " +
			"GROUP BY seller, window_start, window_end) A ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime",
	}
	for name, q := range queries {
		t.Run(name, func(t *testing.T) {
			mustExec(t, s, "SET 'execution.runtime-mode' = 'batch'")
			want := canon(runRows(t, s, q))
			if len(want) == 0 {
				t.Fatal("the batch answer is empty: the data does not exercise the join")
			}
			mustExec(t, s, "SET 'execution.runtime-mode' = 'streaming'")
			diff(t, name, canon(runRows(t, s, q)), want)
			plan := strings.Join(explainLines(t, s, "EXPLAIN ANALYZE VERBOSE "+q), "\n")
			if !strings.Contains(plan, "state expires with the watermark") {
				t.Errorf("the join's state is not bounded by event time:\n%s", plan)
			}
			// How much expires before the end depends on how the two
			// inputs' watermarks interleave (exec/ops
			// TestStreamJoinIntervalExpiry drives that and checks it).
			t.Logf("%d of %d rows expired with the watermark", counterIn(plan, "rows expired by the watermark"), rowsInto(t, plan, "StreamJoin"))
			if late := counterIn(plan, "late rows dropped"); late != 0 {
				t.Errorf("%d rows dropped as late", late)
			}
			mustExec(t, s, "SET 'execution.runtime-mode' = 'batch'")
		})
	}
}

// rowsInto reads the "in: N rows" of the first stage named op in an
// EXPLAIN ANALYZE text.
func rowsInto(t *testing.T, plan, op string) int64 {
	t.Helper()
	i := strings.Index(plan, "] "+op)
	if i < 0 {
		t.Fatalf("no %s in the plan:\n%s", op, plan)
	}
	m := regexp.MustCompile(`in: ([\d.]+)(K?) rows`).FindStringSubmatch(plan[i:])
	if m == nil {
		t.Fatalf("no input count for %s", op)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	if m[2] == "K" {
		v *= 1000
	}
	return int64(v)
}

// eventTables declares bids, persons and auctions: nexmark generator tables
// of events events in batches of 500, each with WATERMARK FOR dateTime AS
// dateTime, at the given parallelism.
func eventTables(t *testing.T, s *Session, events, parallelism int) {
	t.Helper()
	gen := fmt.Sprintf("WITH ('connector' = 'nexmark', 'table' = '%%s', 'events.num' = '%d', 'batch.size' = '500')", events)
	mustExec(t, s, fmt.Sprintf("SET 'parallelism' = '%d'", parallelism),
		"CREATE TABLE bids (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR, "+
			"WATERMARK FOR `dateTime` AS `dateTime`) "+fmt.Sprintf(gen, "bid"),
		"CREATE TABLE persons (id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, state VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR, "+
			"WATERMARK FOR `dateTime` AS `dateTime`) "+fmt.Sprintf(gen, "person"),
		"CREATE TABLE auctions (id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT, `dateTime` TIMESTAMP(3), "+
			"expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR, WATERMARK FOR `dateTime` AS `dateTime`) "+fmt.Sprintf(gen, "auction"))
}
