package sql

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/clink-sql/clink/sql/ast"
)

var nodeType = reflect.TypeFor[ast.Node]()

// reachableNodes collects, by reflection, every node of a tree: each
// pointer to a node type, and each node held by value (an Ident in a
// struct or a slice), by its address.
func reachableNodes(v reflect.Value, out map[ast.Node]bool) {
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			reachableNodes(v.Elem(), out)
		}
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		if v.Type().Implements(nodeType) {
			out[v.Interface().(ast.Node)] = true
		}
		reachableNodes(v.Elem(), out)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if f.Kind() == reflect.Struct && f.CanAddr() && reflect.PointerTo(f.Type()).Implements(nodeType) {
				out[f.Addr().Interface().(ast.Node)] = true
			}
			reachableNodes(f, out)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			e := v.Index(i)
			if e.Kind() == reflect.Struct && reflect.PointerTo(e.Type()).Implements(nodeType) {
				out[e.Addr().Interface().(ast.Node)] = true
			}
			reachableNodes(e, out)
		}
	}
}

// TestWalkVisitsEveryNode: over every statement of the corpus, Inspect
// visits each node of the tree exactly once, and closes each with nil.
func TestWalkVisitsEveryNode(t *testing.T) {
	types := map[string]bool{}
	for _, c := range walkCorpus(t) {
		st, err := Parse(c.text)
		if err != nil {
			if strings.HasPrefix(c.where, "walkExtra") {
				t.Errorf("%s: %v", c.where, err)
			}
			continue
		}
		want := map[ast.Node]bool{}
		reachableNodes(reflect.ValueOf(st), want)
		got := map[ast.Node]int{}
		open := 0
		ast.Inspect(st, func(n ast.Node) bool {
			if n == nil {
				open--
				return true
			}
			open++
			got[n]++
			types[reflect.TypeOf(n).Elem().Name()] = true
			return true
		})
		if open != 0 {
			t.Errorf("%s: %d nodes not closed with Visit(nil)", c.where, open)
		}
		for n := range want {
			if got[n] != 1 {
				t.Errorf("%s: %T %s visited %d times", c.where, n, n, got[n])
			}
		}
		for n := range got {
			if !want[n] {
				t.Errorf("%s: visited %T %s, which is not in the tree", c.where, n, n)
			}
		}
	}
	for _, name := range strings.Fields(allNodeTypes) {
		if !types[name] {
			t.Errorf("no %s met: the test does not cover it", name)
		}
	}
}

// allNodeTypes are the types that implement ast.Node.
const allNodeTypes = `Ident ObjectName Query With CTE SetOp Select Values SelectExpr Star OrderItem NamedWindow
	TableAlias TableName PathTable Derived TableFunc Join ColumnRef NumberLit StringLit BoolLit NullLit TypedLit
	IntervalLit Unary Binary IsNull IsBool Between InList InSubquery Exists Subquery Quantified Like When Case
	Cast FuncCall Extract Substring Trim Position Tuple Array Subscript TableArg Descriptor NamedArg GroupingSets
	Rollup Cube WindowSpec FrameBound TypeName RowField CreateTable ColumnDef Meta WatermarkDef PrimaryKey Option
	CreateView CreateIndex Drop Insert StatementSet BeginStatementSet EndStatementSet Explain Set Reset Show Describe`

// walkCorpus is the repository's statements and walkExtra.
func walkCorpus(t *testing.T) []stmtCase {
	cases := repoCorpus(t)
	for i, x := range walkExtra {
		cases = append(cases, stmtCase{where: fmt.Sprintf("walkExtra[%d]", i), text: x})
	}
	return cases
}

// walkExtra holds the nodes the corpus lacks.
var walkExtra = []string{`EXPLAIN (DURATION '1s') WITH RECURSIVE r(n) AS (SELECT 1)
SELECT TRY_CAST(a AS ROW<x MAP<INT, ARRAY<INT>>>), t.*, POSITION('a' IN s), TRIM(LEADING 'x' FROM s), a[1],
  ARRAY[1], ROW(1, 2), x IS TRUE, x IS DISTINCT FROM y, x = ANY (SELECT 1), s ILIKE 'a' ESCAPE '!',
  EXTRACT(YEAR FROM d), SUBSTRING(s FROM 1 FOR 2), DATE '2020-01-01', sum(x) OVER (w ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)
FROM (VALUES (1)) AS v(a) JOIN u USING (a) NATURAL JOIN w, LATERAL TABLE(f(TABLE t PARTITION BY k, DESCRIPTOR(ts), n => 1)) AS g,
  side FOR SYSTEM_TIME AS OF v.ts AS s
GROUP BY GROUPING SETS ((a), ()), ROLLUP(a), CUBE(b) WINDOW w AS (PARTITION BY a) QUALIFY true
ORDER BY 1 LIMIT 1 OFFSET 1`,
	`CREATE TABLE t (a INT PRIMARY KEY COMMENT 'k', b ROW<c INT> METADATA FROM 'h' VIRTUAL, d AS a + 1,
  WATERMARK FOR a AS a) COMMENT 'x' WITH ('k' = 'v')`,
	"CREATE TABLE u (a INT, PRIMARY KEY (a) NOT ENFORCED)",
	"CREATE INDEX i ON t (a)",
	"EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; END",
	"BEGIN STATEMENT SET", "END", "RESET", "SHOW TABLES LIKE 'a%'", "DESCRIBE 'x.parquet'",
}

// TestSpans: every node's span lies in the text and inside its parent's,
// so an error at a node points into what the user wrote.
func TestSpans(t *testing.T) {
	for _, c := range walkCorpus(t) {
		st, err := Parse(c.text)
		if err != nil {
			continue
		}
		var stack []ast.Node
		ast.Inspect(st, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			if n.Pos() < 0 || n.End() < n.Pos() || n.End() > len(c.text) {
				t.Errorf("%s: %T %s has span [%d, %d) outside the text", c.where, n, n, n.Pos(), n.End())
			}
			if len(stack) > 0 {
				if p := stack[len(stack)-1]; n.Pos() < p.Pos() || n.End() > p.End() {
					t.Errorf("%s: %T %s [%d, %d) lies outside its parent %T [%d, %d)", c.where, n, n, n.Pos(), n.End(), p, p.Pos(), p.End())
				}
			}
			stack = append(stack, n)
			return true
		})
	}
}

func TestInspectPrunes(t *testing.T) {
	st, err := Parse("SELECT a FROM t WHERE b IN (SELECT c FROM u)")
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	ast.Inspect(st, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.InSubquery:
			// Its left operand is walked; the subquery is not.
			ast.Inspect(n.X, func(m ast.Node) bool {
				if c, ok := m.(*ast.ColumnRef); ok {
					cols = append(cols, c.String())
				}
				return true
			})
			return false
		case *ast.ColumnRef:
			cols = append(cols, n.String())
		}
		return true
	})
	if got := fmt.Sprint(cols); got != "[a b]" {
		t.Errorf("columns outside the subquery = %s, want [a b]", got)
	}
}
