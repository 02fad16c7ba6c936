package ops

import (
	"context"
	"errors"
	"hash/maphash"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// The hash join's build side under a memory budget: a grace hash join.
// The build input is buffered and reserved as it arrives; when a
// reservation is refused, the buffered build rows, the probe rows held
// for the build, and every row of either input after them are written to
// spillFanout partition files per side by a hash of their join key. Rows
// that can match share a key, so they share a partition: each pair of
// partitions is then joined by a fresh join of the same spec (which may
// partition again, under a new seed, to maxSpillLevel), and a partition's
// unmatched rows are the join's. A NULL key matches nothing and lands in
// one partition, where the partition's join pads it as the whole join
// would. A null-aware join (NOT IN) cannot be split (a NULL on the build
// side decides every probe row) and a join without equality keys has no
// key to split by: those fail naming the limit.

// joinBuildRowBytes estimates the hash table's share per build row: the
// key index entry, the CSR offsets and order.
const joinBuildRowBytes = 24

// joinSpill is a join that went to disk.
type joinSpill struct {
	dir     *spillDir
	seed    maphash.Seed
	started [2]bool // probe, build: the side's buffers exist
	parts   [2][spillFanout]spillBuffer
	rows    [spillFanout][]int32
	buf     []byte
}

// accountBuild reserves the buffered build side against ctx's budget; a
// refusal turns the join into a grace hash join, or fails.
func (j *batchJoin) accountBuild(ctx context.Context, add int64, rows int) error {
	if !j.resInit {
		j.resInit = true
		j.res = exec.MemoryBudgetFrom(ctx).Reserve("JOIN build")
	}
	j.buildBytes += add + int64(rows)*joinBuildRowBytes
	if j.res == nil || j.spill != nil {
		return nil
	}
	err := j.res.Resize(j.buildBytes)
	var lim *exec.MemoryLimitError
	if err == nil || !errors.As(err, &lim) {
		return err
	}
	switch {
	case j.newChild == nil || !j.keyed():
		lim.Why = "a join without equality keys keeps its whole build side"
	case j.nullAware:
		lim.Why = "NOT IN keeps its whole subquery result"
	case j.level >= maxSpillLevel:
		lim.Why = "a partition still does not fit after spilling to a depth of 3 (4096 partitions)"
	default:
		return j.startSpill(ctx)
	}
	return err
}

// startSpill partitions what is buffered and lets its memory go.
func (j *batchJoin) startSpill(ctx context.Context) error {
	sp := &joinSpill{dir: newSpillDir(exec.MemoryBudgetFrom(ctx)), seed: maphash.MakeSeed()}
	j.spill = sp
	chunks, pending := j.chunks, j.pending
	j.chunks, j.pending = nil, nil
	defer func() {
		for _, c := range chunks {
			if c.rec != nil {
				c.rec.Release()
			}
		}
		for _, p := range pending {
			p.b.Release()
		}
	}()
	for _, c := range chunks {
		var err error
		if c.rec != nil {
			err = j.spillBatch(1, c.rec.Schema(), c.rec, nil)
		} else {
			err = j.spillBatch(1, c.schema, nil, c.rows)
		}
		if err != nil {
			return err
		}
	}
	for _, p := range pending {
		var err error
		if p.columnar {
			err = j.spillBatch(0, p.b.Schema(), p.b.Record(), nil)
		} else {
			err = j.spillBatch(0, p.b.Schema(), nil, p.b.Rows())
		}
		if err != nil {
			return err
		}
	}
	j.buildBytes = 0
	j.res.Release()
	j.spilled.partitions += spillFanout
	return nil
}

// spillBatch writes one batch of input (0 probe, 1 build), a record or
// rows, to the side's partitions.
func (j *batchJoin) spillBatch(input int, schema *arrow.Schema, rec arrow.RecordBatch, rows []exec.Row) error {
	sp := j.spill
	side := input // schemas and parts: 0 probe, 1 build
	if !sp.started[side] {
		sp.started[side] = true
		plain := plainSchema(schema)
		for p := range sp.parts[side] {
			sp.parts[side][p] = newSpillBuffer(sp.dir, plain, j.mem)
		}
	}
	keys := j.leftKeys
	if input == 1 {
		keys = j.rightKeys
	}
	for p := range sp.rows {
		sp.rows[p] = sp.rows[p][:0]
	}
	if rec != nil {
		for i := 0; i < int(rec.NumRows()); i++ {
			buf := sp.buf[:0]
			for _, k := range keys {
				buf, _ = appendKeyArr(buf, rec.Column(k), i)
			}
			sp.buf = buf
			p := maphash.Bytes(sp.seed, buf) % spillFanout
			sp.rows[p] = append(sp.rows[p], int32(i))
		}
	}
	for i, r := range rows {
		buf := sp.buf[:0]
		for _, k := range keys {
			buf = appendKeyValue(buf, r[k])
		}
		sp.buf = buf
		p := maphash.Bytes(sp.seed, buf) % spillFanout
		sp.rows[p] = append(sp.rows[p], int32(i))
	}
	for p := range sp.rows {
		idx := sp.rows[p]
		part := &sp.parts[side][p]
		if rec != nil && len(idx) > 0 {
			if err := part.appendRows(rec, idx); err != nil {
				return err
			}
			continue
		}
		for _, i := range idx {
			if err := part.appendRow(rows[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// finishSpilled joins each pair of partitions with a fresh join once both
// inputs have ended.
func (j *batchJoin) finishSpilled(ctx context.Context, out exec.Emitter) error {
	if !j.ended[0] || !j.ended[1] || j.unmatchedOut {
		return nil
	}
	j.unmatchedOut = true
	sp := j.spill
	for side := range sp.parts {
		for p := range sp.parts[side] {
			part := &sp.parts[side][p]
			if part.bld == nil {
				continue
			}
			err := part.flush()
			part.release()
			if err != nil {
				return err
			}
		}
	}
	for p := 0; p < spillFanout; p++ {
		probe, build := sp.parts[0][p].file, sp.parts[1][p].file
		if probe == nil && build == nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := j.joinPartition(ctx, probe, build, out); err != nil {
			return err
		}
	}
	if j.heldWM > exec.MinWatermark {
		return out.EmitWatermark(ctx, j.heldWM)
	}
	return nil
}

func (j *batchJoin) joinPartition(ctx context.Context, probe, build *spillFile, out exec.Emitter) error {
	child := j.newChild()
	child.level, child.columnarOut = j.level+1, j.columnarOut
	defer func() {
		child.Close()
		j.spilled.add(child.spilled)
	}()
	feed := func(input int, f *spillFile) error {
		if f != nil {
			err := f.replay(ctx, child, input, out)
			f.close()
			if err != nil {
				return err
			}
		}
		return child.Finish(ctx, input, out)
	}
	if err := feed(1, build); err != nil {
		return err
	}
	return feed(0, probe)
}

// closeSpill removes the partition files (every path).
func (j *batchJoin) closeSpill() {
	j.res.Release()
	if j.spill == nil {
		return
	}
	for side := range j.spill.parts {
		for p := range j.spill.parts[side] {
			j.spill.parts[side][p].release()
		}
	}
	j.spilled.add(j.spill.dir.stats)
	j.spill.dir.remove()
	j.spill = nil
}
