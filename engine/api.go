// Package engine is the session both faces share: clinksh and clink-kernel
// hand it statements and render what it returns. It owns the catalog and the
// session settings and wires sql -> plan -> exec for each statement.
package engine

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/explain"
)

// ResultWriter receives a query's rows. It is declared here, by its
// producer's caller, and implemented by the shell and the kernel.
type ResultWriter interface {
	// Columns is called once, before any batch, for statements that return rows.
	Columns(schema *arrow.Schema, bounded bool) error
	// Batch delivers rows. The batch is lent for the call: read it (as
	// Arrow through b.Record() when b.IsColumnar(), else b.Rows()) and do
	// not keep it. Returning exec.ErrStop ends the query early, normally.
	Batch(b *exec.Batch) error
}

// OrderedWriter is a ResultWriter that keeps an updating result as a table
// (a changelog applied): ResultOrder, called before Columns, gives the rank
// order of a continuous top-n by the result's columns (the row kind "op"
// is column 0), so the table shows rows in rank order, not arrival order.
type OrderedWriter interface {
	ResultOrder(keys []ops.SortKey)
}

// KeyedWriter is a ResultWriter that keeps an updating result as a table:
// ResultKey, called before Columns, gives the result columns (the row kind
// "op" is column 0) that identify a row of that table (an updating GROUP
// BY's keys), so a change finds its row by them alone.
type KeyedWriter interface {
	ResultKey(cols []int)
}

// TableKey is the key ResultKey gives as columns of the table, which
// leaves out the row kind; nil when the row kind is among them.
func TableKey(cols []int) []int {
	key := make([]int, 0, len(cols))
	for _, c := range cols {
		if c < 1 {
			return nil
		}
		key = append(key, c-1)
	}
	return key
}

// TableOrder orders the rows of a changelog applied as a table, which
// leaves out the row kind (column 0 of the result), by keys as
// ResultOrder gives them; nil when a key is the row kind itself.
func TableOrder(keys []ops.SortKey) func(a, b exec.Row) int {
	shifted := make([]ops.SortKey, 0, len(keys))
	for _, k := range keys {
		if k.Col < 1 {
			return nil
		}
		k.Col--
		shifted = append(shifted, k)
	}
	return ops.RowOrder(shifted)
}

// ExecOptions are per-statement options.
type ExecOptions struct {
	// Progress, when set, is advanced by the scans while the query runs.
	Progress *exec.Progress
}

// Outcome is what a statement did besides rows.
type Outcome struct {
	// Message is an acknowledgement for statements without rows
	// ("Table 'bid' created.", "SET 'parallelism' = '2'").
	Message string
	// Text is preformatted output shown as is (EXPLAIN).
	Text string
	// Explain is the EXPLAIN document Text was rendered from (nil otherwise).
	Explain *explain.Document
	// Rows is the number of result rows delivered.
	Rows int64
	// Elapsed is the statement's wall time.
	Elapsed time.Duration
}

// TableInfo describes a catalog entry, for \d and completion.
type TableInfo struct {
	Name      string
	Kind      string // "table" or "view"
	Connector string // "parquet", "nexmark", ... ("" for views)
	Schema    *arrow.Schema
	Bounded   bool
}
