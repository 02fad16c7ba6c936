package sqllogictest

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// maxValues bounds a result the runner keeps: a query gone wrong (a
// cross join without its predicate) fails instead of exhausting memory.
const maxValues = 20_000_000

// collector is the ResultWriter of one record: it renders each value as it
// arrives, reading columnar batches through exec.Value, so collecting a
// result never materialises a batch into rows. With discard set it only
// counts rows (a statement's result).
type collector struct {
	types   string
	discard bool
	fields  []arrow.Field
	columns bool // Columns was called: the statement returns a result set
	values  []string
	rows    int
}

// Columns checks the column count against the record's type string and
// refuses a result that would never end.
func (c *collector) Columns(schema *arrow.Schema, bounded bool) error {
	if !bounded {
		return errors.New("sqllogictest: the result is unbounded (a streaming query never ends)")
	}
	c.fields, c.columns = schema.Fields(), true
	if !c.discard && len(c.fields) != len(c.types) {
		return fmt.Errorf("wrong number of result columns: the record declares %d (%s), the query has %d",
			len(c.types), c.types, len(c.fields))
	}
	return nil
}

// Batch renders the batch's values, row by row.
func (c *collector) Batch(b *exec.Batch) error {
	n := b.Len()
	c.rows += n
	if c.discard || n == 0 {
		return nil
	}
	if len(c.values)+n*len(c.fields) > maxValues {
		return fmt.Errorf("sqllogictest: the result has more than %d values", maxValues)
	}
	if b.IsColumnar() {
		rec := b.Record()
		for i := 0; i < n; i++ {
			for col, f := range c.fields {
				c.values = append(c.values, render(exec.Value(rec.Column(col), i), f.Type, c.types[col]))
			}
		}
		return nil
	}
	for _, row := range b.Rows() {
		for col, f := range c.fields {
			c.values = append(c.values, render(row[col], f.Type, c.types[col]))
		}
	}
	return nil
}
