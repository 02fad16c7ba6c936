package kafka_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/connectors/jsonfmt"
	"github.com/clink-sql/clink/connectors/kafka"
	"github.com/clink-sql/clink/connectors/nexmark"
	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
)

// rowsWriter keeps each result row rendered as text.
type rowsWriter struct {
	schema *arrow.Schema
	rows   []string
	onRow  func(n int) error
}

func (w *rowsWriter) Columns(s *arrow.Schema, bounded bool) error { w.schema = s; return nil }

func (w *rowsWriter) Batch(b *exec.Batch) error {
	var rows []exec.Row
	if b.IsColumnar() {
		rows = exec.DecodeRows(b.Record())
	} else {
		rows = b.Rows()
	}
	for _, r := range rows {
		cells := make([]string, len(r))
		for c, v := range r {
			cells[c] = expr.FormatValue(v, w.schema.Field(c).Type)
		}
		w.rows = append(w.rows, strings.Join(cells, " | "))
	}
	if w.onRow != nil {
		return w.onRow(len(w.rows))
	}
	return nil
}

func newSession(t *testing.T) *engine.Session {
	t.Helper()
	s := engine.NewSession(engine.SessionOptions{NoDemoCatalog: true})
	t.Cleanup(func() { s.Close() })
	return s
}

func exec1(t *testing.T, s *engine.Session, stmt string) {
	t.Helper()
	if _, err := s.Execute(context.Background(), stmt, nil, engine.ExecOptions{}); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

func query(t *testing.T, s *engine.Session, q string) []string {
	t.Helper()
	w := &rowsWriter{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := s.Execute(ctx, q, w, engine.ExecOptions{}); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	sort.Strings(w.rows)
	return w.rows
}

func startBroker(t *testing.T, topics ...string) *kafka.Embedded {
	t.Helper()
	e, err := kafka.StartEmbedded(context.Background(), kafka.EmbeddedOptions{Topics: topics})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// bids generates n nexmark bids: the Arrow record and its JSON lines.
func bids(t *testing.T, n int) (arrow.RecordBatch, [][]byte) {
	t.Helper()
	tbl, err := nexmark.NewTable(map[string]string{"table": "bid", "events.num": strconv.Itoa(n * 50 / 46)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	src, err := tbl.OpenSource(connectors.ScanSpec{BatchSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	c := &collect{}
	if err := src.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if len(c.recs) != 1 {
		t.Fatalf("want one batch, got %d", len(c.recs))
	}
	rec := c.recs[0]
	t.Cleanup(rec.Release)
	enc := jsonfmt.NewEncoder(rec.Schema())
	lines := make([][]byte, rec.NumRows())
	for i := range lines {
		lines[i] = enc.AppendRow(nil, rec, i)
	}
	return rec, lines
}

type collect struct{ recs []arrow.RecordBatch }

func (c *collect) Emit(_ context.Context, b *exec.Batch) error {
	r := b.Record()
	r.Retain()
	c.recs = append(c.recs, r)
	return nil
}
func (c *collect) EmitWatermark(context.Context, int64) error { return nil }

// produce writes values to topic, value i to partition i % partitions.
func produce(t *testing.T, addr, topic string, partitions int, values [][]byte) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var rs []*kgo.Record
	for i, v := range values {
		rs = append(rs, &kgo.Record{Topic: topic, Partition: int32(i % partitions), Value: v})
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func writeParquet(t *testing.T, rec arrow.RecordBatch) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bids.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer tbl.Release()
	if err := pqarrow.WriteTable(tbl, f, 1000, nil, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	return path
}

const bidColumns = "auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR"

func kafkaDDL(name, addr, topic string, extra ...string) string {
	opts := []string{"'connector' = 'kafka'", "'topic' = '" + topic + "'",
		"'properties.bootstrap.servers' = '" + addr + "'", "'format' = 'json'",
		"'scan.startup.mode' = 'earliest-offset'", "'scan.bounded.mode' = 'latest-offset'"}
	opts = append(opts, extra...)
	return fmt.Sprintf("CREATE TABLE %s (%s) WITH (%s)", name, bidColumns, strings.Join(opts, ", "))
}

// sameQueries runs each query over the Kafka table and the Parquet file.
func sameQueries(t *testing.T, s *engine.Session, table, parquetPath string) {
	t.Helper()
	for _, q := range []string{
		"SELECT count(*), sum(price), min(bidder), max(auction) FROM %s",
		"SELECT channel, count(*), sum(price) FROM %s GROUP BY channel",
		"SELECT auction, bidder, price, `dateTime`, extra FROM %s WHERE price > 5000000",
		"SELECT * FROM %s",
	} {
		got := query(t, s, fmt.Sprintf(q, table))
		want := query(t, s, fmt.Sprintf(q, "'"+parquetPath+"'"))
		if len(got) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s: kafka and parquet differ: %d vs %d rows\nkafka:   %.300v\nparquet: %.300v", q, len(got), len(want), got, want)
		}
	}
}

func checkedMem(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}
