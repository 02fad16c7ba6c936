package kafka_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clink-sql/clink/connectors/kafka"
	"github.com/clink-sql/clink/engine"
)

// The demo catalog: a nexmark topic on the embedded broker, filled by the
// generator, with the ddl_views.sql views over it.
func TestDemoCatalogViews(t *testing.T) {
	s := engine.NewSession(engine.SessionOptions{})
	defer s.Close()
	for _, q := range []string{
		"SELECT auction, bidder, price, channel, `dateTime` FROM bid LIMIT 20",
		"SELECT id, name, `dateTime` FROM person LIMIT 2",
		"SELECT id, seller, expires FROM auction LIMIT 3",
		"SELECT event_type, `dateTime` FROM nexmark LIMIT 50",
	} {
		rows := query(t, s, q)
		want := 0
		fmt.Sscanf(q[strings.LastIndex(q, "LIMIT ")+6:], "%d", &want)
		if len(rows) != want {
			t.Fatalf("%s: %d rows", q, len(rows))
		}
		for _, r := range rows {
			if strings.Contains(r, "NULL") {
				t.Fatalf("%s: row %q has a NULL: the view does not match the topic's shape", q, r)
			}
		}
	}
}

func TestRunBroker(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- kafka.RunBroker(ctx, kafka.BrokerOptions{Listen: "127.0.0.1:0", NexmarkRate: 5000,
			Topics: []string{"extra:3"}, Ready: func(a string) { ready <- a }})
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	s := newSession(t)
	exec1(t, s, fmt.Sprintf("CREATE TABLE nx (event_type INT, `dateTime` TIMESTAMP(3)) WITH ('connector' = 'kafka', "+
		"'topic' = 'nexmark', 'properties.bootstrap.servers' = '%s', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset')", addr))
	if rows := query(t, s, "SELECT event_type FROM nx LIMIT 100"); len(rows) != 100 {
		t.Fatalf("%d rows", len(rows))
	}
	exec1(t, s, fmt.Sprintf("CREATE TABLE ex (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'extra', "+
		"'properties.bootstrap.servers' = '%s', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset')", addr))
	if rows := query(t, s, "SELECT count(*) FROM ex"); len(rows) != 1 || rows[0] != "0" {
		t.Fatalf("empty 3-partition topic: %v", rows)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("RunBroker did not return after cancellation")
	}
}
