// Package nexmark is the built-in Nexmark event generator connector
// ('connector' = 'nexmark').
//
// It follows the shape of the reference generator of Apache Beam and Flink's
// nexmark: event n's kind comes from n modulo the proportions (person :
// auction : bid = 1 : 3 : 46 by default), ids, sellers, bidders and auctions
// are derived from n the same way (with the hot seller / bidder / auction
// skew), and event n's time is 2015-07-15 00:00:00 UTC + n * 1e6/rate µs.
// Unlike the reference, it is deterministic: every value is drawn from a
// splitmix64 stream seeded by (seed, n, field), so event n is the same
// whatever the batch size, the projection or the table it is read through.
//
// Tables: 'table' = 'nexmark' (default) is the wide table of ddl_gen.sql:
// event_type INT, person/auction/bid ROW<...> (null for the other kinds) and
// dateTime TIMESTAMP(3). 'person', 'auction' and 'bid' are flat tables with
// the columns of the views of ddl_views.sql, holding only that kind's events
// (still numbered by the global event sequence).
package nexmark

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

func init() {
	connectors.Register("nexmark", func(options map[string]string, declared *arrow.Schema) (connectors.Table, error) {
		return NewTable(options, declared)
	})
}

const defaultBatchSize = 8192

// config is the parsed WITH options.
type config struct {
	table                            string
	eventsNum                        int64 // 0: unbounded
	firstRate, nextRate              int64 // events/s; 0: unpaced
	personProp, auctionProp, bidProp int64
	seed                             int64
	batchSize                        int
	batchSizeSet                     bool
}

// optionNames are the options the connector accepts (Flink's nexmark names
// where they exist). 'connector' is the planner's, accepted and ignored.
var optionNames = []string{
	"connector", "table", "events.num", "first-event.rate", "next-event.rate",
	"person.proportion", "auction.proportion", "bid.proportion", "seed", "batch.size",
}

func parseConfig(options map[string]string) (*config, error) {
	c := &config{table: "nexmark", personProp: 1, auctionProp: 3, bidProp: 46, batchSize: defaultBatchSize}
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	sort.Strings(keys) // report the first bad option deterministically
	for _, k := range keys {
		v := strings.TrimSpace(options[k])
		var err error
		switch k {
		case "connector":
		case "table":
			c.table = strings.ToLower(v)
			if _, ok := tableKinds[c.table]; !ok {
				return nil, fmt.Errorf("nexmark: option 'table' = '%s': want one of 'nexmark', 'person', 'auction', 'bid'", v)
			}
		case "events.num":
			c.eventsNum, err = parseInt(k, v, 0)
		case "first-event.rate":
			c.firstRate, err = parseInt(k, v, 0)
		case "next-event.rate":
			c.nextRate, err = parseInt(k, v, 0)
		case "person.proportion":
			c.personProp, err = parseInt(k, v, 0)
		case "auction.proportion":
			c.auctionProp, err = parseInt(k, v, 0)
		case "bid.proportion":
			c.bidProp, err = parseInt(k, v, 0)
		case "seed":
			c.seed, err = strconv.ParseInt(v, 10, 64)
			if err != nil {
				err = fmt.Errorf("nexmark: option 'seed' = '%s': not an integer", v)
			}
		case "batch.size":
			var n int64
			n, err = parseInt(k, v, 1)
			if err == nil && n > 1<<20 {
				err = fmt.Errorf("nexmark: option 'batch.size' = '%s': at most %d", v, 1<<20)
			}
			c.batchSize, c.batchSizeSet = int(n), true
		default:
			return nil, fmt.Errorf("nexmark: unknown option '%s' (known: %s)", k, strings.Join(optionNames, ", "))
		}
		if err != nil {
			return nil, err
		}
	}
	// Auctions need sellers and bids need auctions and bidders: the id
	// arithmetic of the reference generator assumes they exist.
	if c.personProp+c.auctionProp+c.bidProp == 0 {
		return nil, fmt.Errorf("nexmark: options 'person.proportion', 'auction.proportion', 'bid.proportion' are all 0")
	}
	if (c.auctionProp > 0 || c.bidProp > 0) && c.personProp == 0 {
		return nil, fmt.Errorf("nexmark: option 'person.proportion' = 0: auctions and bids need people")
	}
	if c.bidProp > 0 && c.auctionProp == 0 {
		return nil, fmt.Errorf("nexmark: option 'auction.proportion' = 0: bids need auctions")
	}
	return c, nil
}

func parseInt(name, v string, minimum int64) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("nexmark: option '%s' = '%s': not an integer", name, v)
	}
	if n < minimum {
		return 0, fmt.Errorf("nexmark: option '%s' = '%s': must be at least %d", name, v, minimum)
	}
	return n, nil
}

// Table is a nexmark generator table.
type Table struct {
	cfg    *config
	kind   uint8 // kindAny for the wide table
	schema *arrow.Schema
	cols   []column // parallel to schema's fields
	gen    *gen
	mem    memory.Allocator
}

// NewTable builds a table from its WITH options. declared is the CREATE
// TABLE schema (without computed columns) or nil for the generated one.
func NewTable(options map[string]string, declared *arrow.Schema) (*Table, error) {
	cfg, err := parseConfig(options)
	if err != nil {
		return nil, err
	}
	kind := tableKinds[cfg.table]
	schema, cols, err := bindDeclared(cfg.table, generatedColumns(kind), declared)
	if err != nil {
		return nil, err
	}
	return &Table{cfg: cfg, kind: kind, schema: schema, cols: cols, gen: newGen(cfg), mem: memory.DefaultAllocator}, nil
}

// WithAllocator returns a copy of the table whose sources allocate their
// batches from mem (tests pass a memory.CheckedAllocator).
func (t *Table) WithAllocator(mem memory.Allocator) *Table {
	c := *t
	c.mem = mem
	return &c
}

// Schema is the table's schema: the declared one, or the generated one.
func (t *Table) Schema() *arrow.Schema { return t.schema }

// Bounded is true iff 'events.num' is set.
func (t *Table) Bounded() bool { return t.cfg.eventsNum > 0 }

// Describe is the table for EXPLAIN.
func (t *Table) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nexmark '%s'", t.cfg.table)
	if t.cfg.eventsNum > 0 {
		fmt.Fprintf(&b, " events.num=%d", t.cfg.eventsNum)
	} else {
		b.WriteString(" unbounded")
	}
	if t.cfg.firstRate > 0 || t.cfg.nextRate > 0 {
		c := t.gen.clock
		if c.rate1 == c.rate2 {
			fmt.Fprintf(&b, " rate=%d/s", c.rate1)
		} else {
			fmt.Fprintf(&b, " rate=%d/s,%d/s", c.rate1, c.rate2)
		}
	}
	fmt.Fprintf(&b, " proportions=%d:%d:%d seed=%d", t.cfg.personProp, t.cfg.auctionProp, t.cfg.bidProp, t.cfg.seed)
	return b.String()
}

// Open returns a source of the columns in spec.
func (t *Table) Open(spec connectors.ScanSpec) (exec.Source, error) {
	return t.OpenSource(spec)
}

// MaxSplits: a generator splits into any number of parts (blocks of events).
func (t *Table) MaxSplits() int { return 0 }

// OpenSource is Open with the concrete type.
func (t *Table) OpenSource(spec connectors.ScanSpec) (*Source, error) {
	idx := spec.Columns
	if idx == nil {
		idx = make([]int, len(t.cols))
		for i := range idx {
			idx[i] = i
		}
	}
	fields := make([]arrow.Field, len(idx))
	cols := make([]column, len(idx))
	for i, c := range idx {
		if c < 0 || c >= len(t.cols) {
			return nil, fmt.Errorf("nexmark: table '%s': scan column %d out of range (the table has %d columns)", t.cfg.table, c, len(t.cols))
		}
		fields[i] = t.schema.Field(c)
		cols[i] = t.cols[c]
	}
	batch := defaultBatchSize
	switch {
	case t.cfg.batchSizeSet:
		batch = t.cfg.batchSize
	case spec.BatchSize > 0:
		batch = spec.BatchSize
	}
	for _, c := range cols {
		if c.kind == kindBid { // the channel tables are built once, on first need
			t.gen.initURLs()
		}
	}
	return &Source{
		gen: t.gen, cfg: t.cfg, kind: t.kind,
		schema: arrow.NewSchema(fields, nil), cols: cols,
		batchSize: batch, progress: spec.Progress, mem: t.mem,
		split: int64(spec.Split), splits: int64(spec.Splits),
	}, nil
}
