// Package kafka is the Kafka connector ('connector' = 'kafka'): a table
// source reading a topic's partitions in parallel with franz-go, decoding
// JSON values through the columnar bridge of connectors/jsonfmt, a JSON sink,
// and an embedded broker on franz-go's kfake for the demo catalog and tests.
package kafka

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/connectors/jsonfmt"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/sql"
)

func init() {
	connectors.Register("kafka", func(options map[string]string, declared *arrow.Schema) (connectors.Table, error) {
		return NewTable(options, declared)
	})
}

// Startup modes (Flink's 'scan.startup.mode').
const (
	StartEarliest  = "earliest-offset"
	StartLatest    = "latest-offset"
	StartGroup     = "group-offsets"
	StartTimestamp = "timestamp"
)

// config is the parsed WITH options.
type config struct {
	topic       string
	brokers     []string
	group       string
	startup     string
	startupMs   int64
	bounded     bool
	reset       string // 'properties.auto.offset.reset' for group-offsets without a commit
	json        jsonfmt.Options
	partitioner string
	batchSize   int
	// idle is 'scan.watermark.idle-timeout': a partition without records
	// for that long stops holding the watermark back (0: never).
	idle time.Duration
	// readCommitted is 'properties.isolation.level' = 'read_committed':
	// records of open and aborted transactions are not read, and a
	// bounded scan ends at the last stable offset.
	readCommitted bool
	// commitEvery is how often a running job commits the group offsets
	// it has delivered ('properties.auto.commit.interval.ms', default 5
	// s; 0 with 'properties.enable.auto.commit' = 'false': only when the
	// job stops).
	commitEvery time.Duration
	// guarantee is 'sink.delivery-guarantee'.
	guarantee string
	// deliveryTimeout is 'sink.delivery-timeout': a record not
	// acknowledged by then fails the statement.
	deliveryTimeout time.Duration
}

// Delivery guarantees of the sink (Flink's 'sink.delivery-guarantee').
const (
	// DeliverNone: records are sent with leader acknowledgement and not
	// waited for; offsets may be committed past records never delivered.
	DeliverNone = "none"
	// DeliverAtLeastOnce: acks=all, idempotent; the sink's Flush waits
	// for every record it was given, and offsets are committed only after.
	DeliverAtLeastOnce = "at-least-once"
)

// metadata keys a METADATA column can read, and the types they allow.
var metadataKeys = map[string]func(arrow.DataType) bool{
	"partition": func(t arrow.DataType) bool { return t.ID() == arrow.INT32 || t.ID() == arrow.INT64 },
	"offset":    func(t arrow.DataType) bool { return t.ID() == arrow.INT64 },
	"timestamp": func(t arrow.DataType) bool { return t.ID() == arrow.TIMESTAMP },
	"key":       func(t arrow.DataType) bool { return t.ID() == arrow.STRING || t.ID() == arrow.BINARY },
	"topic":     func(t arrow.DataType) bool { return t.ID() == arrow.STRING },
}

func parseConfig(options map[string]string) (*config, error) {
	c := &config{startup: StartGroup, reset: "earliest", batchSize: 8192, commitEvery: 5 * time.Second,
		guarantee: DeliverAtLeastOnce, deliveryTimeout: 30 * time.Second}
	autoCommit := true
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := strings.TrimSpace(options[k])
		switch {
		case k == "connector", strings.HasPrefix(k, "metadata."), jsonfmt.IsOption(k):
		case k == "topic":
			if strings.Contains(v, ";") {
				return nil, fmt.Errorf("kafka: option 'topic' = '%s': one topic per table is supported", v)
			}
			c.topic = v
		case k == "properties.bootstrap.servers":
			for _, b := range strings.Split(v, ",") {
				if b = strings.TrimSpace(b); b != "" {
					c.brokers = append(c.brokers, b)
				}
			}
		case k == "properties.group.id":
			c.group = v
		case k == "properties.auto.offset.reset":
			switch v {
			case "earliest", "latest", "none":
				c.reset = v
			default:
				return nil, fmt.Errorf("kafka: option '%s' = '%s': want 'earliest', 'latest' or 'none'", k, v)
			}
		case k == "properties.isolation.level":
			switch v {
			case "read_committed":
				c.readCommitted = true
			case "read_uncommitted":
			default:
				return nil, fmt.Errorf("kafka: option '%s' = '%s': want 'read_committed' or 'read_uncommitted'", k, v)
			}
		case k == "properties.enable.auto.commit":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("kafka: option '%s' = '%s': want 'true' or 'false'", k, v)
			}
			autoCommit = b
		case k == "properties.auto.commit.interval.ms":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("kafka: option '%s' = '%s': want a number of milliseconds, 1 or more", k, v)
			}
			c.commitEvery = time.Duration(n) * time.Millisecond
		case k == "sink.delivery-guarantee":
			switch v {
			case DeliverNone, DeliverAtLeastOnce:
				c.guarantee = v
			case "exactly-once":
				return nil, fmt.Errorf("kafka: option '%s' = 'exactly-once' needs checkpointing with Kafka transactions, which this build does not have yet: use 'at-least-once' (with checkpoints, the sink flushes at every checkpoint)", k)
			default:
				return nil, fmt.Errorf("kafka: option '%s' = '%s': want 'none' or 'at-least-once'", k, v)
			}
		case k == "sink.delivery-timeout":
			d, err := sql.ParseDuration(v)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("kafka: option '%s' = '%s': want a duration such as '30 s' or '2 min'", k, v)
			}
			c.deliveryTimeout = d
		case strings.HasPrefix(k, "properties."):
			// Other client properties are accepted for Flink DDL
			// compatibility; franz-go's defaults apply.
		case k == "scan.startup.mode":
			switch v {
			case StartEarliest, StartLatest, StartGroup, StartTimestamp:
				c.startup = v
			default:
				return nil, fmt.Errorf("kafka: option 'scan.startup.mode' = '%s': want one of earliest-offset, latest-offset, group-offsets, timestamp", v)
			}
		case k == "scan.startup.timestamp-millis":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("kafka: option '%s' = '%s': not a millisecond timestamp", k, v)
			}
			c.startupMs = n
		case k == "scan.watermark.idle-timeout":
			d, err := sql.ParseDuration(v)
			if err != nil || d < 0 {
				return nil, fmt.Errorf("kafka: option '%s' = '%s': want a duration such as '5 s', '500 ms' or '1 min'", k, v)
			}
			c.idle = d
		case k == "scan.bounded.mode":
			switch v {
			case "unbounded":
			case "latest-offset":
				c.bounded = true
			default:
				return nil, fmt.Errorf("kafka: option 'scan.bounded.mode' = '%s': want 'unbounded' or 'latest-offset'", v)
			}
		case k == "format" || k == "value.format":
			if v != "json" {
				return nil, fmt.Errorf("kafka: option '%s' = '%s': only 'json' is supported", k, v)
			}
		case k == "sink.partitioner":
			switch v {
			case "default", "round-robin", "fixed":
				c.partitioner = v
			default:
				return nil, fmt.Errorf("kafka: option 'sink.partitioner' = '%s': want 'default', 'round-robin' or 'fixed'", v)
			}
		case k == "scan.batch-size":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1<<20 {
				return nil, fmt.Errorf("kafka: option '%s' = '%s': want 1..%d", k, v, 1<<20)
			}
			c.batchSize = n
		default:
			return nil, fmt.Errorf("kafka: unknown option '%s'", k)
		}
	}
	if c.topic == "" {
		return nil, fmt.Errorf("kafka: option 'topic' is required")
	}
	if len(c.brokers) == 0 {
		return nil, fmt.Errorf("kafka: option 'properties.bootstrap.servers' is required")
	}
	if _, ok := options["format"]; !ok {
		if _, ok := options["value.format"]; !ok {
			return nil, fmt.Errorf("kafka: option 'format' is required ('json')")
		}
	}
	if c.startup == StartTimestamp {
		if _, ok := options["scan.startup.timestamp-millis"]; !ok {
			return nil, fmt.Errorf("kafka: 'scan.startup.mode' = 'timestamp' needs 'scan.startup.timestamp-millis'")
		}
	}
	if !autoCommit {
		c.commitEvery = 0
	}
	var err error
	if c.json, err = jsonfmt.ParseOptions(options); err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	return c, nil
}

// Table is a Kafka topic read and written as JSON.
type Table struct {
	cfg    *config
	schema *arrow.Schema
	meta   map[int]string // column index -> metadata key
	mem    memory.Allocator
}

// NewTable builds a table from its WITH options. declared is the CREATE
// TABLE schema; METADATA columns come in it, named by 'metadata.<column>' =
// '<key>' options (partition, offset, timestamp, key, topic).
func NewTable(options map[string]string, declared *arrow.Schema) (*Table, error) {
	cfg, err := parseConfig(options)
	if err != nil {
		return nil, err
	}
	if declared == nil || len(declared.Fields()) == 0 {
		return nil, fmt.Errorf("kafka: topic '%s': the JSON format needs declared columns", cfg.topic)
	}
	t := &Table{cfg: cfg, schema: declared, meta: map[int]string{}, mem: memory.DefaultAllocator}
	for k, v := range options {
		col, ok := strings.CutPrefix(k, "metadata.")
		if !ok {
			continue
		}
		idx := -1
		for i, f := range declared.Fields() {
			if strings.EqualFold(f.Name, col) {
				idx = i
			}
		}
		if idx < 0 {
			return nil, fmt.Errorf("kafka: option '%s': no column '%s'", k, col)
		}
		key := strings.ToLower(strings.TrimSpace(v))
		okType, known := metadataKeys[key]
		if !known {
			return nil, fmt.Errorf("kafka: METADATA column '%s': unknown key '%s' (known: key, offset, partition, timestamp, topic)", col, v)
		}
		if typ := declared.Field(idx).Type; !okType(typ) {
			return nil, fmt.Errorf("kafka: METADATA column '%s' FROM '%s' cannot be %s", col, key, typ)
		}
		t.meta[idx] = key
	}
	// Validate the physical columns' types against the JSON format now,
	// not at the first scan.
	if _, err := jsonfmt.NewDecoder(t.mem, t.physical(nil), cfg.json); err != nil {
		return nil, fmt.Errorf("kafka: topic '%s': %w", cfg.topic, err)
	}
	return t, nil
}

// WithAllocator returns a copy of the table whose sources and sinks
// allocate from mem (tests pass a memory.CheckedAllocator).
func (t *Table) WithAllocator(mem memory.Allocator) *Table {
	c := *t
	c.mem = mem
	return &c
}

// physical is the decoder schema of the non-metadata columns among cols
// (all columns when cols is nil), in order.
func (t *Table) physical(cols []int) *arrow.Schema {
	if cols == nil {
		cols = allColumns(len(t.schema.Fields()))
	}
	var fs []arrow.Field
	for _, c := range cols {
		if _, isMeta := t.meta[c]; !isMeta {
			fs = append(fs, t.schema.Field(c))
		}
	}
	return arrow.NewSchema(fs, nil)
}

// physicalIndexes are the positions in physical(nil) of the non-metadata
// columns among cols, in order: what the decoder builds of the declared
// fields it judges every record against.
func (t *Table) physicalIndexes(cols []int) []int {
	pos := make(map[int]int, len(t.schema.Fields()))
	for c := range t.schema.Fields() {
		if _, isMeta := t.meta[c]; !isMeta {
			pos[c] = len(pos)
		}
	}
	var out []int
	for _, c := range cols {
		if p, ok := pos[c]; ok {
			out = append(out, p)
		}
	}
	return out
}

func allColumns(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// Schema is the declared schema, metadata columns included.
func (t *Table) Schema() *arrow.Schema { return t.schema }

// Bounded is true with 'scan.bounded.mode' = 'latest-offset'.
func (t *Table) Bounded() bool { return t.cfg.bounded }

// Describe is the table for EXPLAIN.
func (t *Table) Describe() string {
	mode := "unbounded"
	if t.cfg.bounded {
		mode = "bounded at latest-offset"
	}
	return fmt.Sprintf("kafka topic '%s' on %s, json, from %s, %s", t.cfg.topic, strings.Join(t.cfg.brokers, ","), t.cfg.startup, mode)
}

// Open returns a source of the columns in spec.
func (t *Table) Open(spec connectors.ScanSpec) (exec.Source, error) {
	return t.OpenSource(spec)
}

// OpenSink returns the JSON sink for INSERT INTO.
func (t *Table) OpenSink(spec connectors.SinkSpec) (exec.Operator, error) {
	if len(t.meta) > 0 {
		return nil, fmt.Errorf("kafka: table '%s' has METADATA columns: writing them is not supported", spec.Name)
	}
	return newSink(t), nil
}
