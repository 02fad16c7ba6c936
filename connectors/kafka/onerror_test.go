package kafka_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/clink-sql/clink/engine"
)

// TestRecordJudgedWhateverIsRead is issue 19's repro: with 'on-error' =
// 'skip', a record whose only bad value is in a column the query does not
// read is skipped all the same, so count(*) equals the rows SELECT *
// returns, on the columnar and the row decode; with 'fail', count(*) fails
// naming the topic, partition, offset and column. A METADATA column first
// in the table checks that the unread fields are found among the physical
// ones.
func TestRecordJudgedWhateverIsRead(t *testing.T) {
	e := startBroker(t, "judged")
	var values [][]byte
	good, sum := 0, 0
	for i := 0; i < 120; i++ {
		price, ts := fmt.Sprintf("%d.25", i), `"2024-05-06 07:08:09"`
		bad := true
		switch i % 8 {
		case 2:
			price = `"unparsable"`
		case 5:
			ts = `"not a time"`
		default:
			bad = false
		}
		values = append(values, []byte(fmt.Sprintf(`{"id": %d, "price": %s, "ts": %s, "tag": "t%d"}`, i, price, ts, i%3)))
		if !bad {
			good++
			sum += i
		}
	}
	produce(t, e.Addr(), "judged", 1, values)
	s := newSession(t)
	ddl := "CREATE TABLE %s (off BIGINT METADATA FROM 'offset', id BIGINT, price DOUBLE, ts TIMESTAMP, tag VARCHAR) WITH (" +
		"'connector' = 'kafka', 'topic' = 'judged', 'properties.bootstrap.servers' = '" + e.Addr() + "', 'format' = 'json', " +
		"'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'on-error' = '%s', 'json.columnar-decode' = '%s')"
	for _, columnar := range []string{"true", "false"} {
		name := "skipping_" + columnar
		exec1(t, s, fmt.Sprintf(ddl, name, "skip", columnar))
		if rows := query(t, s, "SELECT * FROM "+name); len(rows) != good {
			t.Fatalf("columnar=%s: SELECT * gave %d rows, want the %d good records", columnar, len(rows), good)
		}
		for _, q := range []string{"SELECT count(*) FROM %s", "SELECT count(id) FROM %s", "SELECT count(off) FROM %s", "SELECT count(tag) FROM %s"} {
			q = fmt.Sprintf(q, name)
			if got := query(t, s, q); len(got) != 1 || got[0] != fmt.Sprint(good) {
				t.Fatalf("columnar=%s: %s = %v, want %d (the rows SELECT * returns)", columnar, q, got, good)
			}
		}
		if got := query(t, s, "SELECT sum(id) FROM "+name); len(got) != 1 || got[0] != fmt.Sprint(sum) {
			t.Fatalf("columnar=%s: sum(id) = %v, want %d", columnar, got, sum)
		}

		name = "failing_" + columnar
		exec1(t, s, fmt.Sprintf(ddl, name, "fail", columnar))
		_, err := s.Execute(context.Background(), "SELECT count(*) FROM "+name, &rowsWriter{}, engine.ExecOptions{})
		if err == nil || !strings.Contains(err.Error(), "topic 'judged' partition 0 offset 2") || !strings.Contains(err.Error(), "'price'") {
			t.Fatalf("columnar=%s, on-error = fail: want an error naming topic, partition, offset 2 and column 'price', got %v", columnar, err)
		}
	}
}
