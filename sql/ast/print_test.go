package ast

import "testing"

// The printer on trees built by hand, as a rewrite would build them: the
// parentheses follow from the tree's shape, not from how it was written.
// (The round trip through the parser is tested in package sql.)

func col(name string) *ColumnRef      { return &ColumnRef{Parts: []Ident{{Name: name}}} }
func num(text string) *NumberLit      { return &NumberLit{Text: text} }
func sel(n string) *Select            { return &Select{Items: []SelectItem{&SelectExpr{Expr: num(n)}}} }
func tbl(name string) *TableName      { return &TableName{Name: ObjectName{Parts: []Ident{{Name: name}}}} }
func bin(op BinaryOp, l, r Expr) Expr { return &Binary{Op: op, L: l, R: r} }

func TestPrintTrees(t *testing.T) {
	a, b, c := col("a"), col("b"), col("c")
	cases := []struct {
		node Node
		want string
	}{
		{bin(OpSub, a, bin(OpSub, b, c)), "a - (b - c)"},
		{bin(OpSub, bin(OpSub, a, b), c), "a - b - c"},
		{bin(OpMul, bin(OpAdd, a, b), c), "(a + b) * c"},
		{bin(OpAdd, a, bin(OpMul, b, c)), "a + b * c"},
		{bin(OpConcat, bin(OpAdd, a, b), c), "a + b || c"},
		{bin(OpAdd, a, bin(OpConcat, b, c)), "a + (b || c)"},
		{bin(OpEq, bin(OpLt, a, b), c), "(a < b) = c"},
		{bin(OpAnd, bin(OpOr, a, b), c), "(a OR b) AND c"},
		{&Unary{Op: OpNot, X: bin(OpAnd, a, b)}, "NOT (a AND b)"},
		{&Unary{Op: OpNeg, X: &Unary{Op: OpNeg, X: num("1")}}, "- -1"},
		{&Unary{Op: OpNeg, X: bin(OpAdd, a, b)}, "-(a + b)"},
		{&IsNull{X: &IsNull{X: a}, Not: true}, "(a IS NULL) IS NOT NULL"},
		{&Cast{X: &Unary{Op: OpNeg, X: a}, Type: &TypeName{Name: "INT"}, Style: CastColons}, "(-a)::INT"},
		{&Subscript{X: &Cast{X: a, Type: &TypeName{Name: "INT"}, Style: CastColons}, Index: num("1")}, "(a::INT)[1]"},
		{&Between{X: a, Lo: bin(OpAnd, b, c), Hi: num("1")}, "a BETWEEN (b AND c) AND 1"},
		{&SetOp{Op: Union, Left: sel("1"), Right: &SetOp{Op: Union, Left: sel("2"), Right: sel("3")}},
			"SELECT 1 UNION (SELECT 2 UNION SELECT 3)"},
		{&SetOp{Op: Intersect, Left: &SetOp{Op: Except, Left: sel("1"), Right: sel("2")}, Right: sel("3"), All: true},
			"(SELECT 1 EXCEPT SELECT 2) INTERSECT ALL SELECT 3"},
		{&SetOp{Op: Union, Left: &SetOp{Op: Intersect, Left: sel("1"), Right: sel("2")}, Right: &SetOp{Op: Intersect, Left: sel("3"), Right: sel("4")}},
			"SELECT 1 INTERSECT SELECT 2 UNION SELECT 3 INTERSECT SELECT 4"},
		{&Join{Kind: LeftJoin, Left: tbl("a"), Right: &Join{Kind: CrossJoin, Left: tbl("b"), Right: tbl("c")}, On: &BoolLit{Value: true}},
			"a LEFT JOIN (b CROSS JOIN c) ON TRUE"},
		{&Ident{Name: "select"}, `"select"`},
		{&Ident{Name: "a b"}, `"a b"`},
		{&Ident{Name: `say "hi"`}, `"say ""hi"""`},
		{&Ident{Name: "Mixed"}, "Mixed"},
		{&Ident{Name: "x", Quoted: true}, `"x"`},
		{&Ident{Name: "1x"}, `"1x"`},
		{&FuncCall{Name: Ident{Name: "left"}, Args: []Expr{a, num("2")}}, "left(a, 2)"},
		{&FuncCall{Name: Ident{Name: "from"}, Args: []Expr{a}}, `"from"(a)`},
		{&StringLit{Value: `it's a \ back`}, `'it''s a \ back'`},
		{&TypeName{Name: "ARRAY", Elem: &TypeName{Name: "MAP", Key: &TypeName{Name: "STRING"}, Value: &TypeName{Name: "INT", NotNull: true}}},
			"ARRAY<MAP<STRING, INT NOT NULL>>"},
	}
	for _, c := range cases {
		if got := c.node.String(); got != c.want {
			t.Errorf("%#v.String() = %s, want %s", c.node, got, c.want)
		}
	}
}

// TestWalkOptionalChildren: absent optional children (nil interfaces and
// pointers) are skipped, not visited.
func TestWalkOptionalChildren(t *testing.T) {
	q := &Query{Body: &Select{Items: []SelectItem{&SelectExpr{Expr: &FuncCall{Name: Ident{Name: "f"}}}}}}
	n := 0
	Inspect(q, func(x Node) bool {
		if x != nil {
			n++
		}
		return true
	})
	// Query, Select, SelectExpr, FuncCall, its name.
	if n != 5 {
		t.Errorf("visited %d nodes, want 5", n)
	}
}
