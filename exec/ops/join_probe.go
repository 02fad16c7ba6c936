package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// joinPairChunk bounds the candidate pairs a join takes from one probe
// batch at a time (batchJoin.pairChunk; tests make it small): a key with
// many build rows, or a nested-loop join's every pair, comes out in
// pieces rather than as one product.
const joinPairChunk = 1 << 14

// probeBatch is a probe batch in the form it is read in: its record on the
// columnar path, its rows on the row path.
type probeBatch struct {
	schema *arrow.Schema
	rec    arrow.RecordBatch
	rows   []exec.Row
	n      int
}

// probe joins one probe batch against the build side.
func (j *batchJoin) probe(ctx context.Context, pb *probeBatch, out exec.Emitter) error {
	if err := j.checkProbeSchema(pb.schema); err != nil {
		return err
	}
	if j.keyed() {
		if err := j.lookup(pb); err != nil {
			return err
		}
	}
	switch {
	case j.typ.buildOnly():
		return j.probeBuildOnly(pb)
	case j.typ.leftOnly():
		return j.probeLeftOnly(ctx, pb, out)
	case j.residual == nil:
		return j.probePairs(ctx, pb, out)
	}
	return j.probePairsResidual(ctx, pb, out)
}

// lookup fills j.gids with each probe row's key id in the build side (-1:
// no match). A key with a NULL where the key is not null-safe may find an
// id when some key is null-safe (the index then keeps NULLs), but never a
// build row: finishBuild files no row under such a key.
func (j *batchJoin) lookup(pb *probeBatch) error {
	keys := j.build.keys
	if pb.rec != nil {
		j.keyCols = j.keyCols[:0]
		for _, k := range j.leftKeys {
			j.keyCols = append(j.keyCols, pb.rec.Column(k))
		}
		gids, err := keys.idsColumnar(j.keyCols, pb.n, false, j.gids, nil)
		if err != nil {
			return fmt.Errorf("join probe: %w", err)
		}
		j.gids = gids
		return nil
	}
	gids := j.gids[:0]
	for ri, r := range pb.rows {
		j.keyVals = j.keyVals[:0]
		for _, k := range j.leftKeys {
			j.keyVals = append(j.keyVals, r[k])
		}
		g, _, err := keys.idRow(j.keyVals, false)
		if err != nil {
			return fmt.Errorf("join probe row %d: %w", ri, err)
		}
		gids = append(gids, g)
	}
	j.gids = gids
	return nil
}

// cands are probe row i's candidate build rows: its key's rows, or every
// row for a nested-loop join.
func (j *batchJoin) cands(i int) []int32 {
	if j.keyed() {
		return j.build.matches(j.gids[i])
	}
	return j.build.allRows()
}

// probePairs is the probe of a join that outputs pairs, without a
// residual: every candidate is a match.
func (j *batchJoin) probePairs(ctx context.Context, pb *probeBatch, out exec.Emitter) error {
	if !j.keyed() {
		return j.crossPairs(ctx, pb, out)
	}
	bs, padLeft := j.build, j.typ.padsLeft()
	for i := 0; i < pb.n; {
		var lidx, ridx []int32
		i, lidx, ridx = equiPairs(j.gids[:pb.n], bs.order, bs.off, i, j.pairChunk, padLeft, j.lidx[:0], j.ridx[:0])
		j.lidx, j.ridx = lidx, ridx
		if len(lidx) == 0 && i < pb.n {
			// Row i alone has more matches than a chunk holds.
			if err := j.emitRowPieces(ctx, pb, i, bs.matches(j.gids[i]), out); err != nil {
				return err
			}
			i++
			continue
		}
		if j.typ == Single && !singleMatches(lidx, ridx) {
			return ErrScalarSubqueryRows
		}
		if j.typ.padsBuild() {
			j.markMatched(ridx)
		}
		if err := j.emitChunk(ctx, pb, lidx, ridx, i < pb.n, out); err != nil {
			return err
		}
	}
	return nil
}

// emitChunk emits a chunk of pairs and, when more of the batch follows,
// checks the context: a long product stops between chunks once cancelled.
func (j *batchJoin) emitChunk(ctx context.Context, pb *probeBatch, lidx, ridx []int32, more bool, out exec.Emitter) error {
	if err := j.emitPairs(ctx, pb, lidx, ridx, out); err != nil {
		return err
	}
	if more {
		return ctx.Err()
	}
	return nil
}

// equiPairs appends the pairs of probe rows i, i+1, ... (their key ids
// gids, the build side's rows by key order[offs[g]:offs[g+1]]; padLeft:
// a row without one pairs with -1) while a row's pairs fit in chunk, and
// returns the row it stopped at. It is the hot loop of an equi-join,
// alone in its function so that its few values stay in registers (inside
// probePairs, with the rest live, they spilled: 2-3 ns a row).
func equiPairs(gids, order, offs []int32, i, chunk int, padLeft bool, lidx, ridx []int32) (int, []int32, []int32) {
	for ; i < len(gids); i++ {
		var ms []int32
		if g := gids[i]; g >= 0 {
			ms = order[offs[g]:offs[g+1]]
		}
		if len(ms) == 0 {
			if padLeft {
				lidx = append(lidx, int32(i))
				ridx = append(ridx, -1)
			}
			continue
		}
		if len(lidx)+len(ms) > chunk {
			break
		}
		for _, m := range ms {
			lidx = append(lidx, int32(i))
			ridx = append(ridx, m)
		}
	}
	return i, lidx, ridx
}

// singleMatches reports whether no probe row has two pairs (they are
// adjacent: equiPairs appends a row's pairs together).
func singleMatches(lidx, ridx []int32) bool {
	for k := 1; k < len(lidx); k++ {
		if lidx[k] == lidx[k-1] && ridx[k] >= 0 {
			return false
		}
	}
	return true
}

// emitRowPieces emits the pairs of probe row i with its matches ms (more
// than a chunk) a chunk at a time.
func (j *batchJoin) emitRowPieces(ctx context.Context, pb *probeBatch, i int, ms []int32, out exec.Emitter) error {
	if j.typ == Single {
		return ErrScalarSubqueryRows
	}
	for off, more := 0, true; more; more = off > 0 {
		var part []int32
		part, off = clip(ms, off, j.pairChunk)
		lidx := j.lidx[:0]
		for range part {
			lidx = append(lidx, int32(i))
		}
		j.lidx = lidx
		if j.typ.padsBuild() {
			j.markMatched(part)
		}
		if err := j.emitChunk(ctx, pb, lidx, part, off > 0, out); err != nil {
			return err
		}
	}
	return nil
}

// crossPairs is probePairs without keys: every probe row pairs with every
// build row (CROSS JOIN), in chunks.
func (j *batchJoin) crossPairs(ctx context.Context, pb *probeBatch, out exec.Emitter) error {
	all := j.build.allRows()
	switch {
	case pb.n == 0:
		return nil
	case len(all) == 0:
		if !j.typ.padsLeft() {
			return nil
		}
		lidx, ridx := j.lidx[:0], j.ridx[:0]
		for i := 0; i < pb.n; i++ {
			lidx = append(lidx, int32(i))
			ridx = append(ridx, -1)
		}
		j.lidx, j.ridx = lidx, ridx
		return j.emitPairs(ctx, pb, lidx, ridx, out)
	case j.typ == Single && len(all) > 1:
		return ErrScalarSubqueryRows
	}
	if j.typ.padsBuild() {
		j.markMatched(all)
	}
	every := func(int) []int32 { return all }
	for i, off := 0, 0; i < pb.n; {
		var lidx, ridx []int32
		i, off, lidx, ridx = j.nextCands(pb.n, i, off, nil, every, j.lidx[:0], j.ridx[:0])
		j.lidx, j.ridx = lidx, ridx
		if err := j.emitChunk(ctx, pb, lidx, ridx, i < pb.n, out); err != nil {
			return err
		}
	}
	return nil
}

// nextCands appends to lidx, ridx the candidates of rows i, i+1, ... that
// want(row) asks for, up to j.pairChunk pairs, continuing row i at its
// candidate off. It returns where to continue: rows before i are done.
func (j *batchJoin) nextCands(n, i, off int, want func(int) bool, cands func(int) []int32, lidx, ridx []int32) (int, int, []int32, []int32) {
	for i < n && len(lidx) < j.pairChunk {
		if want != nil && !want(i) {
			i, off = i+1, 0
			continue
		}
		var ms []int32
		ms, off = clip(cands(i), off, j.pairChunk-len(lidx))
		for _, m := range ms {
			lidx = append(lidx, int32(i))
			ridx = append(ridx, m)
		}
		if off == 0 {
			i++
		}
	}
	return i, off, lidx, ridx
}

// clip takes a row's candidates ms from off, at most room of them, and
// says where the row continues (0: it is done).
func clip(ms []int32, off, room int) ([]int32, int) {
	ms = ms[off:]
	if len(ms) > room {
		return ms[:room], off + room
	}
	return ms, 0
}

// probePairsResidual is the probe of a join that outputs pairs, with a
// residual: the candidates of a chunk of rows are filtered by it, and
// padding (LEFT, FULL, SINGLE) waits until a row's last candidate is
// decided. The pairs kept are emitted once a chunk's worth has gathered
// or the batch ends.
func (j *batchJoin) probePairsResidual(ctx context.Context, pb *probeBatch, out exec.Emitter) error {
	hits := j.resetHits(pb.n)
	padLeft, padBuild, single := j.typ.padsLeft(), j.typ.padsBuild(), j.typ == Single
	olidx, oridx := j.olidx[:0], j.oridx[:0]
	for i, off := 0, 0; i < pb.n; {
		first := i
		var lidx, ridx []int32
		i, off, lidx, ridx = j.nextCands(pb.n, i, off, nil, j.cands, j.lidx[:0], j.ridx[:0])
		j.lidx, j.ridx = lidx, ridx
		sel, _, err := j.evalResidual(pb, lidx, ridx, false)
		if err != nil {
			return err
		}
		for _, k := range sel {
			l, r := lidx[k], ridx[k]
			hits[l]++
			if single && hits[l] > 1 {
				return ErrScalarSubqueryRows
			}
			olidx = append(olidx, l)
			oridx = append(oridx, r)
			if padBuild {
				j.markMatched(ridx[k : k+1])
			}
		}
		if padLeft {
			for r := first; r < i; r++ {
				if hits[r] == 0 {
					olidx = append(olidx, int32(r))
					oridx = append(oridx, -1)
				}
			}
		}
		j.olidx, j.oridx = olidx, oridx
		if i < pb.n && len(olidx) < j.pairChunk {
			// A selective condition keeps few pairs of a chunk: gather
			// more before emitting, rather than many small batches.
			if err := ctx.Err(); err != nil {
				return err
			}
			continue
		}
		if err := j.emitChunk(ctx, pb, olidx, oridx, i < pb.n, out); err != nil {
			return err
		}
		olidx, oridx = olidx[:0], oridx[:0]
	}
	return nil
}

// probeBuildOnly is the probe of RIGHT SEMI and RIGHT ANTI: a probe row
// only marks its key's build rows matched (once per key: keysDone), and
// the build rows come out when the probe input ends (emitUnmatched).
func (j *batchJoin) probeBuildOnly(pb *probeBatch) error {
	if j.residual != nil || !j.keyed() {
		return fmt.Errorf("join: %s needs equi-keys and no residual", j.typ)
	}
	if j.keysDone == nil {
		j.keysDone = make([]bool, j.build.keys.len())
	}
	for _, g := range j.gids[:pb.n] {
		if g >= 0 && !j.keysDone[g] {
			j.keysDone[g] = true
			j.markMatched(j.build.matches(g))
		}
	}
	return nil
}

// probeLeftOnly is the probe of SEMI, ANTI and MARK: each probe row's
// outcome (a match, none, or for a null-aware join unknown) is settled
// over the whole batch, then the batch's output comes out at once (at most
// one row per probe row).
func (j *batchJoin) probeLeftOnly(ctx context.Context, pb *probeBatch, out exec.Emitter) error {
	hits := j.resetHits(pb.n)
	unknown := j.resetUnknown(pb.n)
	if j.residual == nil {
		for i := 0; i < pb.n; i++ {
			if len(j.cands(i)) > 0 {
				hits[i] = 1
			}
		}
	} else {
		// A nested-loop join that is null aware reads the residual's
		// NULLs: its mark is the three-valued OR of the condition.
		wantNulls := j.nullAware && !j.keyed()
		want := func(i int) bool { return hits[i] == 0 }
		err := j.residualExists(ctx, pb, want, j.cands, wantNulls, func(l int32, null bool) {
			if null {
				unknown[l] = true
			} else {
				hits[l]++
			}
		})
		if err != nil {
			return err
		}
	}
	if j.nullAware && j.keyed() && j.typ != Semi && len(j.plainKeys) > 0 && j.build.n > 0 {
		if err := j.nullAwareUnknown(ctx, pb, hits, unknown); err != nil {
			return err
		}
	}
	return j.emitLeftOnly(ctx, pb, hits, unknown, out)
}

// residualExists evaluates the residual over the candidate pairs of the
// rows want(row) asks for, in chunks, and calls found for every pair it
// makes TRUE, or NULL when nulls is set. want is asked again when a row's
// candidates continue in the next chunk, so a row settled by then is cut
// short.
func (j *batchJoin) residualExists(ctx context.Context, pb *probeBatch, want func(int) bool, cands func(int) []int32, nulls bool, found func(l int32, null bool)) error {
	for i, off := 0, 0; i < pb.n; {
		var lidx, ridx []int32
		i, off, lidx, ridx = j.nextCands(pb.n, i, off, want, cands, j.lidx[:0], j.ridx[:0])
		j.lidx, j.ridx = lidx, ridx
		if len(lidx) == 0 {
			continue
		}
		sel, nsel, err := j.evalResidual(pb, lidx, ridx, nulls)
		if err != nil {
			return err
		}
		for _, k := range sel {
			found(lidx[k], false)
		}
		for _, k := range nsel {
			found(lidx[k], true)
		}
		if i < pb.n {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// markMatched records, for a RIGHT or FULL join, the build rows in ms
// (-1, a padded probe row, is none) as matched.
func (j *batchJoin) markMatched(ms []int32) {
	if len(ms) == 0 {
		return
	}
	if j.matched == nil {
		j.matched = make([]bool, j.build.n)
	}
	for _, m := range ms {
		if m >= 0 {
			j.matched[m] = true
		}
	}
}

func (j *batchJoin) resetHits(n int) []int32 {
	j.hits = growTo(j.hits[:0], n)
	clear(j.hits)
	return j.hits
}

func (j *batchJoin) resetUnknown(n int) []bool {
	j.unknown = growTo(j.unknown[:0], n)
	clear(j.unknown)
	return j.unknown
}

// setPairChunk sets the candidate chunk size (tests).
func (j *batchJoin) setPairChunk(n int) { j.pairChunk = n }
