package kafka_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestKafkaThroughput reports end-to-end rows/s of a Kafka JSON scan through
// the engine (embedded broker over TCP, 3 partitions decoded in parallel).
// It reports; it asserts nothing about time.
//
//	CLINK_BENCH_KAFKA=300000 go test -run KafkaThroughput -v ./connectors/kafka
func TestKafkaThroughput(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CLINK_BENCH_KAFKA"))
	if n == 0 {
		t.Skip("set CLINK_BENCH_KAFKA=records")
	}
	e := startBroker(t, "bench:3")
	_, lines := bids(t, n)
	produce(t, e.Addr(), "bench", 3, lines)
	s := newSession(t)
	exec1(t, s, kafkaDDL("kb", e.Addr(), "bench"))
	for _, q := range []string{"SELECT count(*), sum(price) FROM kb", "SELECT count(*), max(extra), min(url), sum(bidder) FROM kb"} {
		best := time.Duration(0)
		for i := 0; i < 3; i++ {
			start := time.Now()
			query(t, s, q)
			if d := time.Since(start); best == 0 || d < best {
				best = d
			}
		}
		t.Logf("%s: %d records in %v: %.2fM rec/s", q, len(lines), best, float64(len(lines))/best.Seconds()/1e6)
	}
	_ = context.Background
}
