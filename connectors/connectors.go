// Package connectors is the contract between the planner and the things
// that produce or consume data (Parquet files, the nexmark generator,
// Kafka). A connector registers a Factory under its 'connector' option name;
// the planner opens a Table's source with what it could push down.
package connectors

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
)

// Table is a catalog table backed by a connector.
type Table interface {
	// Schema is the table's full schema.
	Schema() *arrow.Schema
	// Bounded reports whether a scan ends by itself.
	Bounded() bool
	// Open returns a source producing the columns in spec (in that order).
	Open(spec ScanSpec) (exec.Source, error)
	// Describe is a short SQL-terms description for EXPLAIN, e.g.
	// "parquet 'data/bid.parquet' (3 files)".
	Describe() string
}

// ScanSpec is what the planner pushes into a scan.
type ScanSpec struct {
	// Columns are indexes into Table.Schema(), in output order; nil means all.
	Columns []int
	// Filters are conjuncts the source may use to skip data (row groups)
	// that cannot match. The planner still evaluates the full predicate
	// above the scan, so a source may ignore any of them.
	Filters []ColumnFilter
	// Predicate is the whole WHERE pushed down onto the scan, as its
	// conjuncts (ANDed), over the scan's output columns. A source may
	// evaluate it and leave out rows where it is not TRUE, so that it
	// decodes the other columns only for the rows that pass (late
	// materialisation). The planner keeps its Filter above the scan, so a
	// source may ignore any conjunct, and may emit rows that fail: the
	// source's evaluation only saves work. Volatile conjuncts (random())
	// are never here: evaluating them twice would filter twice.
	Predicate []Conjunct
	// RowGroupsOnly is the A/B switch back to coarse skipping (SET
	// 'scan.late-materialization' = 'off'): the source skips whole row
	// groups by their statistics and nothing finer (no pages, no
	// dictionaries), and ignores Predicate.
	RowGroupsOnly bool
	// BatchSize is the preferred rows per batch (0: the source's default).
	BatchSize int
	// Progress, when set, is advanced by the source as it reads.
	Progress *exec.Progress
	// Split and Splits ask for part Split (0-based) of Splits disjoint
	// parts of the table, so parallel instances read it together. The
	// planner sets Splits > 1 only for a SplitTable.
	Split, Splits int
	// Share, when set (Splits > 1), is common to all the parts of one
	// split scan, so they can hand work out among themselves as they run
	// instead of each reading a fixed part; see Share.
	Share *Share
}

// ScanColumns resolves spec's Columns against the table's schema: the
// column indexes in output order (every column when Columns is nil) and
// the schema of the batches a scan emits.
func ScanColumns(schema *arrow.Schema, spec ScanSpec) ([]int, *arrow.Schema, error) {
	cols := spec.Columns
	if cols == nil {
		cols = make([]int, schema.NumFields())
		for i := range cols {
			cols[i] = i
		}
	}
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		if c < 0 || c >= schema.NumFields() {
			return nil, nil, fmt.Errorf("column index %d out of range (%d columns)", c, schema.NumFields())
		}
		fields[i] = schema.Field(c)
	}
	return cols, arrow.NewSchema(fields, nil), nil
}

// Share is one value the parts of a split scan hold in common. A source
// that keeps its work in a queue there lets a part that finishes early take
// what is left, so a part on a slower core (or with more expensive rows)
// no longer sets the scan's end. The planner makes one per scan and passes
// it to every part's Open; a source may ignore it.
type Share struct {
	once sync.Once
	mu   sync.Mutex
	v    any
}

// Get returns the shared value, made by init on the first call (the
// parts' calls may race; init runs once and the others wait for it).
func (s *Share) Get(init func() any) any {
	s.once.Do(func() {
		v := init()
		s.mu.Lock()
		s.v = v
		s.mu.Unlock()
	})
	return s.v
}

// Peek returns the shared value if Get has made it, else nil; it never
// waits (EXPLAIN reads it while the scan may still run).
func (s *Share) Peek() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.v
}

// SplitTable is a Table whose scans split into disjoint parts that run in
// parallel: Parquet row groups, Kafka partitions, generator events.
type SplitTable interface {
	Table
	// MaxSplits is how many parts the table can be read in (0: any number).
	MaxSplits() int
}

// ScanCounts are what a source did with its filters and predicate beyond
// skipping whole row groups by their statistics, for EXPLAIN ANALYZE.
type ScanCounts struct {
	// Row groups skipped when about to be read: a dictionary held no
	// value a conjunct could be TRUE for; the page statistics ruled out
	// every page.
	RowGroupsByDictionary, RowGroupsByPages int64
	// RowsByPages are the rows the page statistics ruled out, those of
	// RowGroupsByPages included.
	RowsByPages int64
	// PagesRead are the data pages read (decompressed and decoded), of all
	// columns, PageBytes their decoded size; PagesJumped those a column
	// reader jumped over without reading them.
	PagesRead, PageBytes, PagesJumped int64
	// Late materialisation: the rows the predicate was evaluated on, those
	// that passed, and the rows the other columns were decoded for (the
	// passing ones, or all of a batch where most passed). Unevaluated are
	// the batches read whole without evaluating (most rows passed batch
	// after batch, or evaluating failed and the Filter reports it).
	RowsEvaluated, RowsPassed, RowsDecoded int64
	BatchesUnevaluated                     int64
}

// Conjunct is one conjunct of a pushed-down predicate.
type Conjunct struct {
	// Expr is BOOLEAN, over the scan's output columns (ColRef indexes
	// into ScanSpec.Columns' order).
	Expr expr.Expr
	// Columns are the output columns Expr reads, ascending.
	Columns []int
}

// ColumnFilter is one pushable conjunct: Column Op Value, where Column is an
// index into Table.Schema() and Value is a row-form value of that column's
// type (see exec.Row). Ops: "=", "<", "<=", ">", ">=", "IS NULL", "IS NOT
// NULL", "IN" (Values holds the list, none of them NULL) and "LIKE" (a
// STRING column; Value is the literal prefix every match starts with, from
// a pattern such as 'abc%' or 'abc_d%').
type ColumnFilter struct {
	Column int
	Op     string
	Value  any
	Values []any
}

// Format renders the filter for EXPLAIN given the column name.
func (f ColumnFilter) Format(name string) string {
	switch f.Op {
	case "IN":
		parts := make([]string, len(f.Values))
		for i, v := range f.Values {
			parts[i] = formatValue(v)
		}
		return fmt.Sprintf("%s IN (%s)", name, strings.Join(parts, ", "))
	case "LIKE":
		s, _ := f.Value.(string)
		return fmt.Sprintf("%s LIKE %s", name, formatValue(s+"%"))
	}
	if f.Value == nil {
		return fmt.Sprintf("%s %s", name, f.Op)
	}
	return fmt.Sprintf("%s %s %s", name, f.Op, formatValue(f.Value))
}

func formatValue(v any) string {
	if s, ok := v.(string); ok {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return fmt.Sprint(v)
}

// Factory builds a table from its WITH options. declared is the schema from
// CREATE TABLE, or nil when the columns were omitted (the connector then
// infers it, e.g. from a Parquet footer).
type Factory func(options map[string]string, declared *arrow.Schema) (Table, error)

var (
	mu        sync.RWMutex
	factories = map[string]Factory{}
)

// Register makes a connector available under name. A second registration of
// the same name is a programming error and panics at init time.
func Register(name string, f Factory) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := factories[name]; dup {
		panic("connectors: duplicate registration of " + name)
	}
	factories[name] = f
}

// Lookup returns the factory registered under name.
func Lookup(name string) (Factory, bool) {
	mu.RLock()
	defer mu.RUnlock()
	f, ok := factories[name]
	return f, ok
}

// Names lists the registered connectors.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	var out []string
	for n := range factories {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// SinkTable is a Table that INSERT INTO can write. The sink is an operator
// (exec.Operator, ideally with the columnar hook so a columnar chain is not
// undone at the last hop) that receives batches of the table's schema, and
// flushes in Finish. A sink-only table's Open returns an error.
type SinkTable interface {
	Table
	OpenSink(spec SinkSpec) (exec.Operator, error)
}

// SinkSpec is what the planner hands a sink.
type SinkSpec struct {
	// Name is the table's name, for messages.
	Name string
}
