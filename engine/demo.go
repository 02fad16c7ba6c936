package engine

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/connectors/kafka"
	"github.com/clink-sql/clink/connectors/nexmark"
	"github.com/clink-sql/clink/plan"
	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

// demoRate paces the demo topic: modest, so an unbounded SELECT * streams
// at a readable pace and costs little CPU.
const demoRate = 1000

// demoViews are the ddl_views.sql views over the demo's nexmark table.
var demoViews = map[string]string{
	"person": "SELECT person.id, person.name, person.emailAddress, person.creditCard, person.city, person.state, " +
		"`dateTime`, person.extra FROM nexmark WHERE event_type = 0",
	"auction": "SELECT auction.id, auction.itemName, auction.description, auction.initialBid, auction.reserve, " +
		"`dateTime`, auction.expires, auction.seller, auction.category, auction.extra FROM nexmark WHERE event_type = 1",
	"bid": "SELECT bid.auction, bid.bidder, bid.price, bid.channel, bid.url, `dateTime`, bid.extra " +
		"FROM nexmark WHERE event_type = 2",
}

// demoKafka is the process's demo broker: started on first use, shared by
// every session, alive until the process exits.
var demoKafka struct {
	once    sync.Once
	brokers string
	err     error
}

// demoBrokers returns the demo's bootstrap servers. CLINK_KAFKA_BOOTSTRAP_SERVERS
// points the demo at a real cluster (whose 'nexmark' topic someone fills,
// e.g. clinksh kafka-broker --nexmark-rate N); otherwise an embedded broker
// starts with a goroutine producing nexmark events at demoRate.
func demoBrokers() (string, error) {
	demoKafka.once.Do(func() {
		if b := os.Getenv("CLINK_KAFKA_BOOTSTRAP_SERVERS"); b != "" {
			demoKafka.brokers = b
			return
		}
		ctx := context.Background()
		// The demo keeps the last ten minutes or 64 MB of events, whichever
		// is less: its queries start at the latest offset, and a broker
		// that kept everything grew by 120 MB every idle minute.
		e, err := kafka.StartEmbedded(ctx, kafka.EmbeddedOptions{
			Topics:    []string{kafka.NexmarkTopic + ":1"},
			Retention: kafka.Retention{Time: 10 * time.Minute, Bytes: 64 << 20},
		})
		if err != nil {
			demoKafka.err = err
			return
		}
		demoKafka.brokers = e.Addr()
		fmt.Fprintf(os.Stderr, "clink: embedded Kafka broker on %s\n", e.Addr())
		go func() {
			if err := kafka.FillNexmark(ctx, e.Addr(), kafka.NexmarkTopic, demoRate); err != nil {
				fmt.Fprintf(os.Stderr, "clink: demo nexmark producer stopped: %v\n", err)
			}
		}()
	})
	return demoKafka.brokers, demoKafka.err
}

// registerDemo adds the demo catalog: a 'nexmark' Kafka table in the JSON
// shape of ddl_kafka.sql (plus a physical dateTime, until the binder computes
// it) and the bid/auction/person views of ddl_views.sql. Nothing starts
// until a statement resolves the table; brokers names the broker then.
//
// The table starts each query from the latest offset: the producer runs
// while the session idles, so reading from the earliest offset would make a
// first query after a pause dump the whole backlog before any live row.
// SET 'scan.startup.mode' changes that for the session's demo table
// (setDemoStartup); a table declared over the topic with its own
// 'scan.startup.mode' (e.g. 'earliest-offset') reads as it says.
func (s *Session) registerDemo(brokers func() (string, error)) {
	s.demoBrokers = brokers
	s.demo = demoTable(brokers, kafka.StartLatest)
	_ = s.cat.Add(s.demo, false)
	for name, text := range demoViews {
		st, err := sql.Parse(text)
		if err != nil {
			panic(fmt.Sprintf("demo view %s: %v", name, err)) // a bug in the text above
		}
		q, ok := st.(*ast.Query)
		if !ok {
			panic(fmt.Sprintf("demo view %s is not a query", name))
		}
		_ = s.cat.Add(&plan.Entry{Name: name, View: q, ViewText: text}, false)
	}
}

// demoTable is the demo's 'nexmark' table, reading from the startup mode
// given.
func demoTable(brokers func() (string, error), mode string) *plan.Entry {
	opts := map[string]string{"connector": "kafka", "topic": kafka.NexmarkTopic, "format": "json",
		"scan.startup.mode": mode}
	return &plan.Entry{Name: "nexmark", Connector: "kafka", Options: opts, Open: func() (connectors.Table, error) {
		addr, err := brokers()
		if err != nil {
			return nil, err
		}
		gen, err := nexmark.NewTable(map[string]string{"table": "nexmark"}, nil)
		if err != nil {
			return nil, err
		}
		o := map[string]string{"properties.bootstrap.servers": addr}
		for k, v := range opts {
			o[k] = v
		}
		return kafka.NewTable(o, gen.Schema())
	}}
}

// setDemoStartup makes the demo table read from mode ("" for the default,
// the latest offset) in the queries that follow. The catalog entry is
// replaced, not changed: a resolved table keeps the options it opened
// with, and a query running now keeps its table. A 'nexmark' the user
// dropped or replaced is left alone.
func (s *Session) setDemoStartup(mode string) {
	if s.demo == nil {
		return
	}
	if cur, ok := s.cat.Lookup("nexmark"); !ok || cur != s.demo {
		return
	}
	if mode == "" {
		mode = kafka.StartLatest
	}
	s.demo = demoTable(s.demoBrokers, mode)
	_ = s.cat.Add(s.demo, true)
}

type errNoConnector string

func (e errNoConnector) Error() string { return "connector '" + string(e) + "' is not in this build" }
