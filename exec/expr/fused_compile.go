package expr

import "github.com/apache/arrow-go/v18/arrow"

// fnode is one compiled node of a fused program. eval computes its
// subtree over the rows of c and returns its result, which stays valid
// until the node's next eval. A node's result kind is kindOf its
// expression's type.
type fnode interface {
	eval(c *fctx) *vec
}

// compiler turns an expression tree into fnodes. A node it has no kernel
// for, or whose inputs it cannot hold, becomes a leaf that the node's own
// EvalColumnar fills once per batch: the fused program stops there and
// picks up above it.
type compiler struct {
	sc    *scratch
	slots int // leaves so far: each reads its own array of the batch
}

func (cp *compiler) leaf(e Expr, col int) *leaf {
	l := &leaf{e: e, col: col, slot: cp.slots, kind: kindOf(e.Type()), sc: cp.sc}
	cp.slots++
	return l
}

// node compiles e.
func (cp *compiler) node(e Expr) fnode {
	if n := cp.fuse(e); n != nil {
		return n
	}
	return cp.leaf(e, -1)
}

// kinds reports whether every expression's values are held as kind k (a
// NULL constant of any type qualifies).
func kinds(k vkind, es ...Expr) bool {
	for _, e := range es {
		if kindOf(e.Type()) != k && !isNull(e.Type()) {
			return false
		}
	}
	return true
}

func valueKind(k vkind) bool {
	switch k {
	case vBool, vI32, vI64, vF32, vF64, vDec:
		return true
	}
	return false
}

// fuse is the fused node for e, nil when there is none.
func (cp *compiler) fuse(e Expr) fnode {
	switch x := e.(type) {
	case *Literal:
		if c, ok := newConstNode(x); ok {
			return c
		}
	case *ColRef:
		return cp.leaf(x, x.Index)
	case *Arith:
		k := kindOf(x.t)
		if (k == vI32 || k == vI64 || k == vF64 || k == vDec) && kinds(k, x.l, x.r) {
			a := &arithNode{op: x.op, kind: k, l: cp.node(x.l), r: cp.node(x.r), sc: cp.sc}
			if k == vDec {
				a.dec, a.nd = x.dec, newNarrowDec(x.dec)
			}
			return a
		}
	case *Compare:
		k := kindOf(x.l.Type())
		if (valueKind(k) || k == vStr) && kinds(k, x.r) && sameType(x.l.Type(), x.r.Type()) {
			return &cmpNode{op: x.op, kind: k, l: cp.node(x.l), r: cp.node(x.r), sc: cp.sc}
		}
	case *Logic:
		return &logicNode{and: x.and, l: cp.node(x.l), r: cp.node(x.r), sc: cp.sc}
	case *Not:
		return &notNode{e: cp.node(x.e), sc: cp.sc}
	case *IsNull:
		return &isNullNode{e: cp.node(x.e), negate: x.negate, sc: cp.sc}
	case *Neg:
		if k := kindOf(x.Type()); valueKind(k) && k != vBool {
			return &negNode{e: cp.node(x.e), kind: k, sc: cp.sc}
		}
	case *Cast:
		if op := castOpFor(x.e.Type(), x.to); op != 0 {
			return newCastNode(op, cp.node(x.e), x.e.Type(), x.to, cp.sc)
		}
	case *Between:
		return cp.fuse(x.expr)
	case *In:
		return cp.in(x)
	case *Like:
		if x.m != nil && kinds(vStr, x.e) {
			return &likeNode{e: cp.node(x.e), m: x.m, negate: x.negate, sc: cp.sc}
		}
	case *Case:
		return cp.caseNode(x)
	case *Coalesce:
		k := kindOf(x.t)
		if valueKind(k) && !isExtension(x.t) && kinds(k, x.args...) {
			n := &coalesceNode{a: newArms(len(x.args), k, cp.sc)}
			for _, a := range x.args {
				n.args = append(n.args, cp.node(a))
			}
			return n
		}
	}
	return nil
}

// sameType: both sides of a comparison hold the same values the same way
// (a NULL constant matches anything).
func sameType(a, b arrow.DataType) bool {
	return isNull(a) || isNull(b) || arrow.TypeEqual(StorageType(a), StorageType(b))
}

func (cp *compiler) in(x *In) fnode {
	if x.set == nil {
		n := cp.node(x.ors)
		if x.negate {
			return &notNode{e: n, sc: cp.sc}
		}
		return n
	}
	switch k := kindOf(x.t); {
	case (k == vI32 || k == vI64 || k == vDec || k == vStr) && kinds(k, x.e):
		if nd := newInNode(x, nil); nd != nil {
			nd.e, nd.sc = cp.node(x.e), cp.sc
			return nd
		}
	}
	return nil
}

func (cp *compiler) caseNode(x *Case) fnode {
	k := kindOf(x.t)
	if !valueKind(k) || isExtension(x.t) || !kinds(k, x.thens...) || x.els != nil && !kinds(k, x.els) {
		return nil
	}
	n := &caseNode{a: newArms(len(x.thens)+1, k, cp.sc)}
	for _, c := range x.conds {
		n.conds = append(n.conds, cp.pred(c))
	}
	for _, t := range x.thens {
		n.thens = append(n.thens, cp.node(t))
	}
	var els fnode
	if x.els != nil {
		els = cp.node(x.els)
	}
	n.thens = append(n.thens, els)
	return n
}

// pred compiles a BOOLEAN e for its TRUE set. Chains of AND (BETWEEN is
// one) and of OR become junctions that evaluate each operand only where
// the chain is still open.
func (cp *compiler) pred(e Expr) truthNode {
	switch x := e.(type) {
	case *Logic:
		j := &junction{and: x.and, sc: cp.sc}
		cp.flatten(x, x.and, &j.kids)
		return j
	case *Between:
		if !x.negate {
			return cp.pred(x.expr)
		}
	case *In:
		if x.set == nil && !x.negate {
			return cp.pred(x.ors)
		}
	}
	return &truthOf{e: cp.node(e), sc: cp.sc}
}

func (cp *compiler) flatten(e Expr, and bool, kids *[]truthNode) {
	switch x := e.(type) {
	case *Logic:
		if x.and == and {
			cp.flatten(x.l, and, kids)
			cp.flatten(x.r, and, kids)
			return
		}
	case *Between:
		if and && !x.negate {
			cp.flatten(x.expr, and, kids)
			return
		}
	}
	*kids = append(*kids, cp.pred(e))
}
