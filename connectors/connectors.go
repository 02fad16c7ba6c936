// Package connectors is the contract between the planner and the things
// that produce or consume data (Parquet files, the nexmark generator,
// Kafka). A connector registers a Factory under its 'connector' option name;
// the planner opens a Table's source with what it could push down.
package connectors

import (
	"fmt"
	"sort"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
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

// ColumnFilter is one pushable conjunct: Column Op Value, where Column is an
// index into Table.Schema() and Value is a row-form value of that column's
// type (see exec.Row). Ops: "=", "<", "<=", ">", ">=", "IS NULL", "IS NOT NULL".
type ColumnFilter struct {
	Column int
	Op     string
	Value  any
}

// String renders the filter for EXPLAIN given the column name.
func (f ColumnFilter) Format(name string) string {
	if f.Value == nil {
		return fmt.Sprintf("%s %s", name, f.Op)
	}
	if s, ok := f.Value.(string); ok {
		return fmt.Sprintf("%s %s '%s'", name, f.Op, s)
	}
	return fmt.Sprintf("%s %s %v", name, f.Op, f.Value)
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
