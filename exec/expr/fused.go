package expr

import (
	"fmt"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Fused evaluates one expression over whole batches without building an
// Arrow array per node. The expression tree is compiled once into a tree
// of typed kernels (fused_*.go); a batch is evaluated 1024 rows at a time,
// each node writing into scratch it owns and reuses, constants kept as
// scalars, and only the root's result becomes an Arrow array (Eval) or a
// selection vector (Select). DECIMAL values travel as int64 while a chunk's
// values fit (dec64.go), in 128 bits otherwise. AND, OR, CASE and COALESCE
// evaluate a later operand only on the rows still undecided, compacted when
// they are few.
//
// The per-node EvalColumnar stays the reference: a subtree without a
// fused kernel is evaluated by it and read as an input column, and a batch
// on which any kernel meets something it does not decide itself (an
// overflow, a failed conversion, an error in a subtree) is evaluated again
// by the reference, which reports the same error as the row path or finds
// that the failure was only under a NULL or a row the row path never
// evaluates. Results are identical by construction of that contract; the
// fused kernels only have to agree where they claim success.
//
// A Fused is not safe for concurrent use: each operator instance owns one.
// Release frees its scratch.
type Fused struct {
	e    Expr
	t    arrow.DataType
	cp   compiler
	root fnode     // nil: evaluate e per node (nothing to fuse)
	pred truthNode // the root as a predicate, built on the first Select
	b    fbatch
	out  memory.Allocator // where a fused result is built (nil: Eval's mem)

	compiled, predCompiled bool

	stats FusedStats
	fails int // consecutive fallbacks
	skip  int // batches left that go straight to the reference
}

// FusedStats counts what a Fused did with its batches.
type FusedStats struct {
	Fused     int // batches the fused program evaluated
	Fallbacks int // batches the reference evaluated after the fused program gave up
	Reference int // batches evaluated per node without trying (nothing to fuse, or backed off)
}

// Fallback damper: after fallbackRun consecutive fallbacks, the next
// fallbackSkip batches go straight to the reference. A batch that falls
// back costs the fused attempt on top of the reference; data that makes
// every batch fall back must not pay that forever.
const (
	fallbackRun  = 4
	fallbackSkip = 64
)

// NewFused prepares e for fused evaluation; mem holds the scratch.
func NewFused(e Expr, mem memory.Allocator) *Fused {
	f := &Fused{e: e, t: e.Type()}
	f.cp.sc = &scratch{mem: mem}
	return f
}

// Expr is the expression evaluated.
func (f *Fused) Expr() Expr { return f.e }

// SetOutput makes the fused path build its results in out. The fused path
// writes every value slot and validity word of the rows it returns (an
// all-NULL chunk's values are zeroed; only the buffers' padding is left
// as found), so out may hand out unzeroed, recycled memory (exec/recycle);
// the per-node path, whose kernels and builders may rely on zeroed memory,
// keeps Eval's mem.
func (f *Fused) SetOutput(out memory.Allocator) { f.out = out }

// Stats reports how the batches were evaluated so far.
func (f *Fused) Stats() FusedStats { return f.stats }

// Release frees the scratch buffers. The Fused may not be used after.
func (f *Fused) Release() { f.cp.sc.release() }

func (f *Fused) compileRoot() {
	f.compiled = true
	if outKind(f.t) == vNone {
		return
	}
	n := f.cp.node(f.e)
	if _, isLeaf := n.(*leaf); isLeaf {
		return // a column, or nothing fusable: the per-node path is as good
	}
	if _, isConst := n.(*constNode); isConst {
		return
	}
	f.root = n
}

// outKind is the kind of a result Eval can build, vNone for the types it
// leaves to the per-node path (strings, extension types, ...).
func outKind(t arrow.DataType) vkind {
	if isExtension(t) {
		return vNone
	}
	switch k := kindOf(t); k {
	case vBool, vI32, vI64, vF32, vF64, vDec:
		return k
	}
	return vNone
}

// useFused applies the damper.
func (f *Fused) useFused() bool {
	if f.skip > 0 {
		f.skip--
		f.stats.Reference++
		return false
	}
	return true
}

func (f *Fused) fellBack() {
	f.stats.Fallbacks++
	if f.fails++; f.fails >= fallbackRun {
		f.fails, f.skip = 0, fallbackSkip
	}
}

func (f *Fused) succeeded() {
	f.stats.Fused++
	f.fails = 0
}

// Eval is e.EvalColumnar(mem, rec): a new array of rec's rows that the
// caller releases.
func (f *Fused) Eval(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	if !f.compiled {
		f.compileRoot()
	}
	if f.root == nil || !f.useFused() {
		if f.root == nil {
			f.stats.Reference++
		}
		return f.e.EvalColumnar(mem, rec)
	}
	n := int(rec.NumRows())
	omem := mem
	if f.out != nil {
		omem = f.out
	}
	out := newOutCol(omem, f.t, outKind(f.t), n)
	ok := f.run(mem, rec, f.root, func(off int, v *vec, k int) { out.put(off, v, k) })
	if !ok {
		out.discard()
		f.fellBack()
		return f.e.EvalColumnar(mem, rec)
	}
	f.succeeded()
	return out.finish(), nil
}

// Select appends to sel[:0] the rows of rec where e is TRUE (not FALSE,
// not NULL): EvalPredicate and SelectionVector in one step, with no
// BOOLEAN array built.
func (f *Fused) Select(mem memory.Allocator, rec arrow.RecordBatch, sel []int32) ([]int32, error) {
	sel = sel[:0]
	if !f.predCompiled {
		f.predCompiled = true
		if id := f.t.ID(); id == arrow.BOOL {
			f.pred = f.cp.pred(f.e)
		}
	}
	if f.pred != nil && f.useFused() {
		ok := f.run(mem, rec, predRoot{f.pred}, func(off int, v *vec, k int) {
			nw := nwords(k)
			for w := 0; w < nw; w++ {
				x := v.b[w]
				if w == nw-1 {
					x &= tailMask(k)
				}
				for x != 0 {
					sel = append(sel, int32(off+w<<6+bits.TrailingZeros64(x)))
					x &= x - 1
				}
			}
		})
		if ok {
			f.succeeded()
			return sel, nil
		}
		sel = sel[:0]
		f.fellBack()
	} else if f.pred == nil {
		f.stats.Reference++
	}
	m, err := EvalPredicate(mem, f.e, rec)
	if err != nil {
		return sel, err
	}
	defer m.Release()
	return SelectionVector(m, sel), nil
}

// predRoot adapts a truthNode to the chunk loop: its TRUE set as a vec.
type predRoot struct{ t truthNode }

func (p predRoot) eval(c *fctx) *vec {
	t, _ := p.t.evalTruth(c)
	return &vec{kind: vBool, mask: -1, b: t}
}

// run evaluates root chunk by chunk, handing each result to put. It
// reports false when the batch must go to the reference.
func (f *Fused) run(mem memory.Allocator, rec arrow.RecordBatch, root fnode, put func(off int, v *vec, n int)) (ok bool) {
	f.b.start(mem, rec, f.cp.slots)
	defer f.b.end()
	defer func() {
		// A kernel that panics (a bug, never data) must not take the query
		// down: the reference evaluates the batch and the test suites see
		// the fallback counted.
		if r := recover(); r != nil {
			f.b.err = fmt.Errorf("fused %s: %v", f.e, r)
			ok = false
		}
	}()
	n := int(rec.NumRows())
	for off := 0; off < n; off += chunkRows {
		c := fctx{b: &f.b, off: off, n: min(chunkRows, n-off)}
		v := root.eval(&c)
		if f.b.bad {
			return false
		}
		put(off, v, c.n)
	}
	return true
}

// fbatch is the batch a program is evaluating: its record and the arrays
// its leaves read, fetched once per batch on first use.
type fbatch struct {
	mem    memory.Allocator
	rec    arrow.RecordBatch
	arrays []arrow.Array
	owned  []bool
	bad    bool  // a kernel gave up: the reference evaluates the batch
	err    error // why, when it was a panic (for debugging; never returned)
}

func (b *fbatch) start(mem memory.Allocator, rec arrow.RecordBatch, slots int) {
	b.mem, b.rec, b.bad, b.err = mem, rec, false, nil
	if cap(b.arrays) < slots {
		b.arrays = make([]arrow.Array, slots)
		b.owned = make([]bool, slots)
	}
	b.arrays = b.arrays[:slots]
	b.owned = b.owned[:slots]
}

func (b *fbatch) end() {
	for i, a := range b.arrays {
		if a != nil && b.owned[i] {
			a.Release()
		}
		b.arrays[i], b.owned[i] = nil, false
	}
	b.rec = nil
}

// array is the storage array leaf l reads this batch; nil when its
// evaluation failed (the batch then falls back).
func (b *fbatch) array(l *leaf) arrow.Array {
	if a := b.arrays[l.slot]; a != nil {
		return storageArray(a)
	}
	var a arrow.Array
	if l.col >= 0 && l.col < int(b.rec.NumCols()) {
		a = b.rec.Column(l.col)
	}
	if a == nil || a.DataType().ID() == arrow.DICTIONARY || !arrow.TypeEqual(StorageType(a.DataType()), StorageType(l.e.Type())) && a.DataType().ID() != arrow.NULL {
		// Not a plain column of the expected type: the node's own
		// evaluation reads it (and decodes a dictionary).
		r, err := l.e.EvalColumnar(b.mem, b.rec)
		if err != nil {
			b.bad = true
			return nil
		}
		a = r
		b.owned[l.slot] = true
	}
	b.arrays[l.slot] = a
	return storageArray(a)
}
