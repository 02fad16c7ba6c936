package ops

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/clink-sql/clink/exec"
)

// windowAggStateVersion is the layout of WindowAggregate's state:
//
//	"spec"           Value: the window (kind, size, slide, offset, gap)
//	"clock"          Value: the watermark fired up to, then the counters
//	                 (late, null event times, fires, windows fired,
//	                 columnar and held-back emits)
//	"input"          the input schema the panes were bound to (no batches)
//	"panes"          TUMBLE/HOP: pane_start, then the pane aggregate's
//	                 groups table (agg_snapshot.go), one batch per open
//	                 window in start order
//	"panes.distinct" pane_start, then the DISTINCT table of each pane
//	"session.events" SESSION: the pending input rows (those of sessions
//	                 not fired yet), decoded, one batch per kept input
//	                 batch in arrival order
//
// A session's bounds are not stored: they are recut from the pending
// events when the watermark passes, as without a checkpoint.
const windowAggStateVersion = 1

var _ exec.Snapshotter = (*WindowAggregate)(nil)

const paneStartCol = "pane_start"

// SnapshotState implements exec.Snapshotter.
func (w *WindowAggregate) SnapshotState(_ context.Context, sw exec.StateWriter) error {
	if w.err != nil {
		return w.err
	}
	if err := writeHeader(sw, w.Kind(), windowAggStateVersion); err != nil {
		return err
	}
	if err := writeInts(sw, "spec", w.specInts()...); err != nil {
		return err
	}
	if err := writeInts(sw, "clock", w.wm, w.late, w.nullTS, w.fires, w.firedPanes, w.colEmits, w.heldBack); err != nil {
		return err
	}
	if w.sess != nil {
		return w.snapshotSessions(sw)
	}
	return w.snapshotPanes(sw)
}

// specInts is the window spec as stored: a restore into other windows
// would cut the panes differently.
func (w *WindowAggregate) specInts() []int64 {
	s := w.spec
	return []int64{int64(s.Kind), s.Size.Microseconds(), s.Slide.Microseconds(), s.Offset.Microseconds(), s.Gap.Microseconds()}
}

func (w *WindowAggregate) snapshotPanes(sw exec.StateWriter) error {
	if len(w.panes) == 0 {
		return nil
	}
	starts := slices.Sorted(maps.Keys(w.panes))
	var groups, distinct []arrow.RecordBatch
	defer func() {
		releaseRecs(groups)
		releaseRecs(distinct)
	}()
	var gSchema, dSchema *arrow.Schema
	var in *arrow.Schema
	for _, start := range starts {
		p := w.panes[start]
		if !p.agg.bound {
			continue // not reached: a pane is made for rows
		}
		if in == nil {
			in = plainSchema(p.agg.in)
		}
		g, d, err := p.agg.saveState(w.mem)
		if err != nil {
			return fmt.Errorf("window aggregate: pane %d: %w", start, err)
		}
		gr, err := prependStart(w, &gSchema, start, g)
		g.Release()
		if err != nil {
			if d != nil {
				d.Release()
			}
			return err
		}
		groups = append(groups, gr)
		if d != nil {
			dr, err := prependStart(w, &dSchema, start, d)
			d.Release()
			if err != nil {
				return err
			}
			distinct = append(distinct, dr)
		}
	}
	if in == nil {
		return nil
	}
	if err := sw.Records("input", in); err != nil {
		return err
	}
	if err := sw.Records("panes", gSchema, groups...); err != nil {
		return err
	}
	if dSchema == nil {
		return nil
	}
	return sw.Records("panes.distinct", dSchema, distinct...)
}

// prependStart is rec with a first pane_start column; *schema is the
// schema of the first pane's, which every other pane's must match.
func prependStart(w *WindowAggregate, schema **arrow.Schema, start int64, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if *schema == nil {
		fs := append([]arrow.Field{{Name: paneStartCol, Type: arrow.PrimitiveTypes.Int64}}, rec.Schema().Fields()...)
		*schema = arrow.NewSchema(fs, nil)
	}
	n := int(rec.NumRows())
	starts := make([]int64, n)
	for i := range starts {
		starts[i] = start
	}
	sc := int64Column(w.mem, starts)
	defer sc.Release()
	cols := append([]arrow.Array{sc}, recordColumns(rec)...)
	out, err := withColumns(*schema, cols, int64(n))
	if err != nil {
		return nil, fmt.Errorf("window aggregate: pane %d: %w", start, err)
	}
	return out, nil
}

// RestoreState implements exec.Snapshotter.
func (w *WindowAggregate) RestoreState(_ context.Context, r exec.StateReader) error {
	kind := w.Kind()
	if w.err != nil {
		return w.err
	}
	if err := checkHeader(r, kind, windowAggStateVersion); err != nil {
		return err
	}
	if len(w.panes) > 0 || (w.sess != nil && len(w.sess.held) > 0) {
		return fmt.Errorf("%s state: restored into an operator that has already run", kind)
	}
	spec, err := readInts(r, kind, "spec", 5)
	if err != nil {
		return err
	}
	if !slices.Equal(spec, w.specInts()) {
		return fmt.Errorf("%s state: the snapshot's windows are not %s (kind, size, slide, offset, gap in µs: %v)", kind, w.spec, spec)
	}
	v, err := readInts(r, kind, "clock", 7)
	if err != nil {
		return err
	}
	w.wm, w.late, w.nullTS, w.fires, w.firedPanes, w.colEmits, w.heldBack = v[0], v[1], v[2], v[3], v[4], v[5], v[6]
	if w.sess != nil {
		return w.restoreSessions(r)
	}
	return w.restorePanes(r)
}

func (w *WindowAggregate) restorePanes(r exec.StateReader) error {
	kind := w.Kind()
	if hasPart(r, "session.events") {
		return fmt.Errorf("%s state: the snapshot is of session windows, this operator is %s", kind, w.spec)
	}
	in, _, ok, err := readPart(r, kind, "input", nil)
	if err != nil || !ok {
		return err
	}
	groups, err := readByStart(r, kind, "panes")
	if err != nil {
		return err
	}
	defer releaseByStart(groups)
	distinct, err := readByStart(r, kind, "panes.distinct")
	if err != nil {
		return err
	}
	defer releaseByStart(distinct)
	for _, start := range slices.Sorted(maps.Keys(groups)) {
		p := w.paneAt(start)
		if err := p.agg.restoreState(in, groups[start], distinct[start]); err != nil {
			return fmt.Errorf("%s %s pane %d: %w", kind, w.spec, start, err)
		}
	}
	return nil
}

// readByStart reads a part whose first column is pane_start and splits
// it into runs of one pane, without that column. The caller releases them
// (releaseByStart).
func readByStart(r exec.StateReader, kind, name string) (map[int64][]arrow.RecordBatch, error) {
	schema, recs, ok, err := readPart(r, kind, name, nil)
	if err != nil || !ok {
		return nil, err
	}
	defer releaseRecs(recs)
	if schema.NumFields() < 1 || schema.Field(0).Name != paneStartCol || schema.Field(0).Type.ID() != arrow.INT64 {
		return nil, fmt.Errorf("%s state: part %q does not start with %s BIGINT: %s", kind, name, paneStartCol, schemaText(schema))
	}
	rest := arrow.NewSchema(schema.Fields()[1:], nil)
	out := map[int64][]arrow.RecordBatch{}
	for _, rec := range recs {
		starts, err := int64sOf(rec.Column(0), paneStartCol)
		if err != nil {
			releaseByStart(out)
			return nil, fmt.Errorf("%s state: %w", kind, err)
		}
		for i := 0; i < len(starts); {
			j := i + 1
			for j < len(starts) && starts[j] == starts[i] {
				j++
			}
			cols := make([]arrow.Array, 0, rest.NumFields())
			for c := 1; c < int(rec.NumCols()); c++ {
				cols = append(cols, array.NewSlice(rec.Column(c), int64(i), int64(j)))
			}
			out[starts[i]] = append(out[starts[i]], array.NewRecordBatch(rest, cols, int64(j-i)))
			releaseAll(cols)
			i = j
		}
	}
	return out, nil
}

func releaseByStart(m map[int64][]arrow.RecordBatch) {
	for _, recs := range m {
		releaseRecs(recs)
	}
}
