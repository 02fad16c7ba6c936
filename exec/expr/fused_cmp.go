package expr

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Fused comparisons, IN over a constant list and LIKE with a constant
// pattern. Results are bit words; the validity is the AND of the inputs'.

// andValid is the validity of a strict operation over x and y (neither
// all NULL): one of theirs when the other has no NULLs, else their AND in
// *own.
func andValid(sc *scratch, own *[]uint64, x, y *vec, n int) []uint64 {
	switch {
	case x.valid == nil:
		return y.valid
	case y.valid == nil:
		return x.valid
	}
	*own = grow(sc, *own, nwords(n))
	o := *own
	for w := range o {
		o[w] = x.valid[w] & y.valid[w]
	}
	return o
}

// widen is v's DECIMAL values in 128 bits: v.d128, or its narrow values
// widened into *own (one value for a constant).
func widen(sc *scratch, own *[]num, v *vec, n int) []num {
	if v.wide {
		return v.d128
	}
	if v.mask == 0 {
		n = 1
	}
	*own = grow(sc, *own, n)
	o := *own
	for i := range o {
		o[i] = num128(v.i64[i])
	}
	return o
}

// cmpWords sets bit i of out to op(x[i], y[i]), a word at a time, one loop
// per operator so the comparison is a single instruction in its body.
func cmpWords[T ordered](op cmpOp, x []T, mx int, y []T, my int, out []uint64, n int) {
	nw := nwords(n)
	for w := 0; w < nw; w++ {
		base := w << 6
		end := min(base+64, n)
		var word uint64
		switch op {
		case opEq:
			for i := base; i < end; i++ {
				word |= b2w(x[i&mx] == y[i&my]) << (i - base)
			}
		case opNe:
			for i := base; i < end; i++ {
				word |= b2w(x[i&mx] != y[i&my]) << (i - base)
			}
		case opLt:
			for i := base; i < end; i++ {
				word |= b2w(x[i&mx] < y[i&my]) << (i - base)
			}
		case opLe:
			for i := base; i < end; i++ {
				word |= b2w(x[i&mx] <= y[i&my]) << (i - base)
			}
		case opGt:
			for i := base; i < end; i++ {
				word |= b2w(x[i&mx] > y[i&my]) << (i - base)
			}
		default:
			for i := base; i < end; i++ {
				word |= b2w(x[i&mx] >= y[i&my]) << (i - base)
			}
		}
		out[w] = word
	}
}

// cmpNode is a comparison of two operands of one kind.
type cmpNode struct {
	op       cmpOp
	kind     vkind
	l, r     fnode
	sc       *scratch
	v        vec
	b, valid []uint64
	xw, yw   []num
}

func (x *cmpNode) eval(c *fctx) *vec {
	l, r := x.l.eval(c), x.r.eval(c)
	if l.null || r.null {
		x.v = vec{kind: vBool, mask: 0, null: true}
		return &x.v
	}
	n := c.n
	x.b = grow(x.sc, x.b, nwords(n))
	out := x.b
	switch x.kind {
	case vI32:
		cmpWords(x.op, l.i32, l.mask, r.i32, r.mask, out, n)
	case vI64:
		cmpWords(x.op, l.i64, l.mask, r.i64, r.mask, out, n)
	case vF32:
		cmpWords(x.op, l.f32, l.mask, r.f32, r.mask, out, n)
	case vF64:
		cmpWords(x.op, l.f64, l.mask, r.f64, r.mask, out, n)
	case vDec:
		if !l.wide && !r.wide {
			cmpWords(x.op, l.i64, l.mask, r.i64, r.mask, out, n)
			break
		}
		a, b := widen(x.sc, &x.xw, l, n), widen(x.sc, &x.yw, r, n)
		clear(out)
		for i := 0; i < n; i++ {
			out[i>>6] |= b2w(threeWay(x.op, cmp128(a[i&l.mask], b[i&r.mask]))) << (i & 63)
		}
	case vStr:
		cmpStrs(x.op, &l.str, &r.str, out, n)
	case vBool:
		for w := range out {
			p, q := l.b[w&l.mask], r.b[w&r.mask]
			switch x.op {
			case opEq:
				out[w] = ^(p ^ q)
			case opNe:
				out[w] = p ^ q
			case opLt: // FALSE < TRUE
				out[w] = ^p & q
			case opLe:
				out[w] = ^p | q
			case opGt:
				out[w] = p &^ q
			default:
				out[w] = p | ^q
			}
		}
	}
	x.v = vec{kind: vBool, mask: -1, b: out, valid: andValid(x.sc, &x.valid, l, r, n)}
	return &x.v
}

// cmpStrs compares strings bytewise (as Go compares strings).
func cmpStrs(op cmpOp, x, y *strView, out []uint64, n int) {
	clear(out[:nwords(n)])
	if y.arr == nil && (op == opEq || op == opNe) {
		// column = 'constant': the length decides most rows.
		s, want := y.lit, op == opEq
		for i := 0; i < n; i++ {
			out[i>>6] |= b2w((x.at(i) == s) == want) << (i & 63)
		}
		return
	}
	for i := 0; i < n; i++ {
		out[i>>6] |= b2w(threeWay(op, strings.Compare(x.at(i), y.at(i)))) << (i & 63)
	}
}

// inNode is e [NOT] IN (constants): TRUE on a match, else NULL when the
// list holds a NULL, else FALSE; NOT IN negates TRUE and FALSE.
type inNode struct {
	e               fnode
	kind            vkind
	negate, hasNull bool
	ints            []int64 // vI32, vI64, and the items of a vDec list that fit int64
	wides           []num   // vDec: every item
	strs            []string
	intSet          map[int64]struct{} // long lists
	strSet          map[string]struct{}
	sc              *scratch
	v               vec
	b, valid        []uint64
}

// inSetMin is the list length from which a map beats a linear scan.
const inSetMin = 16

func newInNode(x *In, e fnode) *inNode {
	k := kindOf(x.t)
	nd := &inNode{e: e, kind: k, negate: x.negate, hasNull: x.hasNull}
	for v := range x.set {
		switch y := v.(type) {
		case int32:
			nd.ints = append(nd.ints, int64(y))
		case int64:
			nd.ints = append(nd.ints, y)
		case arrow.Date32:
			nd.ints = append(nd.ints, int64(y))
		case arrow.Timestamp:
			nd.ints = append(nd.ints, int64(y))
		case num:
			nd.wides = append(nd.wides, y)
			if fitsInt64(y) {
				nd.ints = append(nd.ints, int64(y.LowBits()))
			}
		case string:
			nd.strs = append(nd.strs, y)
		default:
			return nil
		}
	}
	if len(nd.ints) >= inSetMin {
		nd.intSet = make(map[int64]struct{}, len(nd.ints))
		for _, v := range nd.ints {
			nd.intSet[v] = struct{}{}
		}
	}
	if len(nd.strs) >= inSetMin {
		nd.strSet = make(map[string]struct{}, len(nd.strs))
		for _, v := range nd.strs {
			nd.strSet[v] = struct{}{}
		}
	}
	return nd
}

func (x *inNode) hasInt(v int64) bool {
	if x.intSet != nil {
		_, ok := x.intSet[v]
		return ok
	}
	for _, c := range x.ints {
		if c == v {
			return true
		}
	}
	return false
}

func (x *inNode) hasStr(s string) bool {
	if x.strSet != nil {
		_, ok := x.strSet[s]
		return ok
	}
	for _, c := range x.strs {
		if c == s {
			return true
		}
	}
	return false
}

func (x *inNode) hasWide(v num) bool {
	for _, c := range x.wides {
		if c == v {
			return true
		}
	}
	return false
}

func (x *inNode) eval(c *fctx) *vec {
	e := x.e.eval(c)
	if e.null {
		x.v = vec{kind: vBool, mask: 0, null: true}
		return &x.v
	}
	n := c.n
	nw := nwords(n)
	x.b = grow(x.sc, x.b, nw)
	hits := x.b
	clear(hits)
	for i := 0; i < n; i++ {
		var hit bool
		switch {
		case x.kind == vI32:
			hit = x.hasInt(int64(e.i32[i&e.mask]))
		case x.kind == vStr:
			hit = x.hasStr(e.str.at(i))
		case x.kind == vDec && e.wide:
			hit = x.hasWide(e.d128[i&e.mask])
		default:
			hit = x.hasInt(e.i64[i&e.mask])
		}
		hits[i>>6] |= b2w(hit) << (i & 63)
	}
	valid := e.valid
	if x.hasNull {
		// A miss is NULL: the validity is the hits (where the input is valid).
		x.valid = grow(x.sc, x.valid, nw)
		for w := range x.valid {
			x.valid[w] = hits[w] & okWord(e, w)
		}
		valid = x.valid
	}
	if x.negate {
		for w := range hits {
			hits[w] = ^hits[w]
		}
	}
	x.v = vec{kind: vBool, mask: -1, b: hits, valid: valid}
	return &x.v
}

// likeNode is e [NOT] LIKE 'constant pattern'.
type likeNode struct {
	e      fnode
	m      *likeMatcher
	negate bool
	sc     *scratch
	v      vec
	b      []uint64
}

func (x *likeNode) eval(c *fctx) *vec {
	e := x.e.eval(c)
	if e.null {
		x.v = vec{kind: vBool, mask: 0, null: true}
		return &x.v
	}
	n := c.n
	x.b = grow(x.sc, x.b, nwords(n))
	clear(x.b)
	for i := 0; i < n; i++ {
		x.b[i>>6] |= b2w(x.m.match(e.str.at(i)) != x.negate) << (i & 63)
	}
	x.v = vec{kind: vBool, mask: -1, b: x.b, valid: e.valid}
	return &x.v
}
