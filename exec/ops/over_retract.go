package ops

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// An OVER aggregate over an updating input (Nexmark q6: the average of a
// seller's last winning bids, over a Top-1 that replaces an auction's
// winner) is something Flink refuses: a row that leaves its input changes
// the frames of the rows after it. In its retracting mode StreamOverAgg
// keeps every current row of each key in ORDER BY order (ties by
// arrival) and, for each change, emits the row's own change with its
// aggregates (the input's kind: +I/+U with the aggregates it has now, -U/-D
// with those it was last emitted with) and then -U/+U for each of the n
// following rows whose aggregates the change moved. Only ROWS BETWEEN n
// PRECEDING AND CURRENT ROW: a frame the change reaches a bounded number
// of rows past. The input's first column is its row kind; so is the
// output's, followed by the other input columns and the aggregates. The
// state is every current row, as for any aggregate over an updating
// input.

// overEntry is a current row of a key with its last emitted aggregates.
type overEntry struct {
	row exec.Row // the input row, its kind column nil
	seq int64
	res []any
}

// NewRetractingOverAgg returns the retracting mode: spec.OrderBy orders a
// key's rows, spec.Rows must be set and spec.Preceding >= 0; every column
// index is of the input, whose column 0 is the row kind. out is the input
// columns and one column per function.
func NewRetractingOverAgg(spec StreamOverSpec, out *arrow.Schema) *StreamOverAgg {
	o := &StreamOverAgg{spec: spec, out: out, changelog: true, cmp: rowComparator(spec.OrderBy),
		lists: map[string][]overEntry{}, parts: map[string]*overPart{}}
	width := out.NumFields() - len(spec.Funcs)
	inRange := func(c int) bool { return c >= 1 && c < width }
	switch {
	case width < 2 || out.Field(0).Type.ID() != arrow.STRING:
		o.err = fmt.Errorf("OVER aggregate over a changelog: the first column must be the VARCHAR row kind")
	case !spec.Rows || spec.Preceding < 0:
		o.err = fmt.Errorf("OVER aggregate over a changelog: only ROWS BETWEEN n PRECEDING AND CURRENT ROW")
	case len(spec.Funcs) == 0:
		o.err = fmt.Errorf("OVER aggregate: no function")
	}
	for _, c := range spec.PartitionBy {
		if !inRange(c) {
			o.err = fmt.Errorf("OVER aggregate over a changelog: partition column %d out of range", c)
		}
	}
	for _, k := range spec.OrderBy {
		if !inRange(k.Col) {
			o.err = fmt.Errorf("OVER aggregate over a changelog: ORDER BY column %d out of range", k.Col)
		}
	}
	for i, f := range spec.Funcs {
		if f.Func != "count_star" && !inRange(f.Arg) {
			o.err = fmt.Errorf("OVER aggregate %d: argument column %d out of range", i+1, f.Arg)
		} else if err := checkOverFunc(f, out, width); err != nil && o.err == nil {
			o.err = fmt.Errorf("OVER aggregate %d: %w", i+1, err)
		}
	}
	return o
}

// processChangelog applies a batch of changes.
func (o *StreamOverAgg) processChangelog(ctx context.Context, b *exec.Batch, out exec.Emitter) error {
	if o.err != nil {
		return o.err
	}
	if b.Schema().NumFields() != o.inputWidth() {
		return fmt.Errorf("OVER aggregate over a changelog: input has %d columns, want %d", b.Schema().NumFields(), o.inputWidth())
	}
	var rows []exec.Row
	for _, in := range b.Rows() {
		kind, _ := in[0].(string)
		// A copy without its kind: a decoded row shares its batch's
		// backing array, and a retraction names the row by its values.
		row := append(exec.Row{nil}, in[1:]...)
		o.buf = o.buf[:0]
		for _, c := range o.spec.PartitionBy {
			o.buf = appendKeyValue(o.buf, row[c])
		}
		list := o.lists[string(o.buf)]
		switch kind {
		case OpInsert, OpUpdateAfter:
			o.seq++
			i := sort.Search(len(list), func(i int) bool { return o.cmp(row, list[i].row) < 0 })
			list = slices.Insert(list, i, overEntry{row: row, seq: o.seq})
			list[i].res = o.frameResults(list, i)
			rows = append(rows, o.changeRow(kind, list[i]))
			rows = o.updateFollowing(list, i+1, rows)
		case OpUpdateBefore, OpDelete:
			lo := sort.Search(len(list), func(i int) bool { return o.cmp(list[i].row, row) >= 0 })
			k := -1
			for j := lo; j < len(list) && o.cmp(list[j].row, row) == 0; j++ {
				if identicalRows(list[j].row, row) {
					k = j
					break
				}
			}
			if k < 0 {
				continue // a retraction of a row never held
			}
			rows = append(rows, o.changeRow(kind, list[k]))
			list = slices.Delete(list, k, k+1)
			rows = o.updateFollowing(list, k, rows)
		default:
			return fmt.Errorf("OVER aggregate over a changelog: unknown row kind %v", in[0])
		}
		if len(list) == 0 {
			delete(o.lists, string(o.buf))
		} else {
			o.lists[string(o.buf)] = list
		}
	}
	return emitRowChunks(ctx, out, o.out, rows)
}

// frameResults are the aggregates of list[i]'s frame: it and the n rows
// before it.
func (o *StreamOverAgg) frameResults(list []overEntry, i int) []any {
	acc := make([]overAcc, len(o.spec.Funcs))
	for _, e := range list[max(0, i-int(o.spec.Preceding)) : i+1] {
		o.eval().add(acc, e.row)
	}
	return o.eval().results(acc)
}

// updateFollowing recomputes the frames of the n rows from list[from] on,
// which a change just before them reached, emitting -U/+U for each whose
// aggregates moved.
func (o *StreamOverAgg) updateFollowing(list []overEntry, from int, rows []exec.Row) []exec.Row {
	for j := from; j < len(list) && j < from+int(o.spec.Preceding); j++ {
		res := o.frameResults(list, j)
		if identicalRows(res, list[j].res) {
			continue
		}
		rows = append(rows, o.changeRow(OpUpdateBefore, list[j]))
		list[j].res = res
		rows = append(rows, o.changeRow(OpUpdateAfter, list[j]))
	}
	return rows
}

// changeRow is e's row with kind in its first column and its aggregates
// after its columns.
func (o *StreamOverAgg) changeRow(kind string, e overEntry) exec.Row {
	r := make(exec.Row, 0, len(e.row)+len(e.res))
	r = append(append(append(r, kind), e.row[1:]...), e.res...)
	return r
}
