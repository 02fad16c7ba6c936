package engine

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/plan"
	"github.com/clink-sql/clink/sql"
)

// insert runs INSERT INTO t SELECT ...: the query's columns are matched to
// the table's by position (as in Flink) and widened where needed; the
// table's sink is the graph's last stage. An unbounded insert runs until
// cancelled, like a query.
func (s *Session) insert(ctx context.Context, x *sql.Insert, opts ExecOptions) (Outcome, error) {
	e, ok := s.cat.Lookup(x.Table)
	if !ok {
		return Outcome{}, fmt.Errorf("table '%s' not found", x.Table)
	}
	if e.IsView() {
		return Outcome{}, fmt.Errorf("cannot INSERT INTO view '%s'", x.Table)
	}
	tbl, err := e.Resolve()
	if err != nil {
		return Outcome{}, fmt.Errorf("table '%s': %w", x.Table, err)
	}
	st, ok := tbl.(connectors.SinkTable)
	if !ok {
		return Outcome{}, fmt.Errorf("table '%s' (connector '%s') cannot be written: it has no sink", x.Table, e.Connector)
	}
	n, err := plan.BindWith(s.cat, x.Query, s.bindOptions())
	if err != nil {
		return Outcome{}, err
	}
	n, err = coerceTo(n, tbl.Schema(), x.Table)
	if err != nil {
		return Outcome{}, err
	}
	sink, err := st.OpenSink(connectors.SinkSpec{Name: e.Name})
	if err != nil {
		return Outcome{}, fmt.Errorf("table '%s': %w", x.Table, err)
	}
	bo := s.buildOptions(opts.Progress)
	bo.SinkName = fmt.Sprintf("Sink %s '%s'", e.Connector, e.Name)
	p, err := plan.Build(n, sink, bo)
	if err != nil {
		return Outcome{}, err
	}
	if err := p.Graph.Run(ctx); err != nil {
		return Outcome{}, err
	}
	rows := p.Root.Exec.Stats.RowsIn.Load()
	return Outcome{Rows: 0, Message: fmt.Sprintf("%d row(s) inserted into '%s'.", rows, e.Name)}, nil
}

// coerceTo makes n's columns match schema by position.
func coerceTo(n plan.Node, schema *arrow.Schema, table string) (plan.Node, error) {
	in := n.Schema()
	if len(in.Fields()) != len(schema.Fields()) {
		return nil, fmt.Errorf("INSERT INTO '%s': the query has %d columns, the table %d", table, len(in.Fields()), len(schema.Fields()))
	}
	same := true
	exprs := make([]expr.Expr, len(in.Fields()))
	names := make([]string, len(in.Fields()))
	for i, f := range in.Fields() {
		want := schema.Field(i)
		names[i] = want.Name
		col := expr.Col(i, f.Type, f.Name)
		if arrow.TypeEqual(f.Type, want.Type) {
			exprs[i] = col
			continue
		}
		same = false
		c, err := expr.Coerce(col, want.Type)
		if err != nil {
			return nil, fmt.Errorf("INSERT INTO '%s': column %d ('%s') is %s, the table's '%s' is %s: %v",
				table, i+1, f.Name, sql.TypeString(f.Type), want.Name, sql.TypeString(want.Type), err)
		}
		exprs[i] = c
	}
	if same {
		return n, nil
	}
	return plan.NewProject(n, exprs, names), nil
}
