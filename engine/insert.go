package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/plan"
	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

// pendingInsert is an INSERT of a statement set, with the text its spans
// point into.
type pendingInsert struct {
	x    *ast.Insert
	text string
}

// insert runs INSERT INTO t [(cols)] query | VALUES ...: the query's
// columns go to the table's by position, or to the named columns (the
// others get NULL), widened where needed; the table's sink is the graph's
// last stage. An unbounded insert runs until cancelled, like a query.
func (s *Session) insert(ctx context.Context, x *ast.Insert, text string, opts ExecOptions) (Outcome, error) {
	if x.Overwrite {
		return Outcome{}, sql.ErrorAt(text, x.Pos(), "INSERT OVERWRITE is not supported")
	}
	name := x.Table.Parts[len(x.Table.Parts)-1].Name
	e, ok := s.cat.Lookup(name)
	if !ok {
		return Outcome{}, sql.ErrorAt(text, x.Table.Pos(), fmt.Sprintf("table '%s' not found", name))
	}
	if e.IsView() {
		return Outcome{}, sql.ErrorAt(text, x.Table.Pos(), fmt.Sprintf("cannot INSERT INTO view '%s'", name))
	}
	return s.insertQuery(ctx, e, x.Columns, x.Query, text, opts)
}

// insertPlan plans writing q's rows into e (through cols when given).
func (s *Session) insertPlan(e *plan.Entry, cols []ast.Ident, q *ast.Query, text string, opts ExecOptions) (*plan.Physical, error) {
	tbl, err := e.Resolve()
	if err != nil {
		return nil, fmt.Errorf("table '%s': %w", e.Name, err)
	}
	st, ok := tbl.(connectors.SinkTable)
	if !ok {
		return nil, fmt.Errorf("table '%s' (connector '%s') cannot be written: it has no sink", e.Name, e.Connector)
	}
	n, _, err := s.planQuery(q, text)
	if err != nil {
		return nil, err
	}
	if cols != nil {
		if n, err = placeColumns(n, tbl.Schema(), cols, text); err != nil {
			return nil, err
		}
	}
	if n, err = plan.CoerceTo(n, tbl.Schema(), e.Name); err != nil {
		return nil, err
	}
	sink, err := st.OpenSink(connectors.SinkSpec{Name: e.Name})
	if err != nil {
		return nil, fmt.Errorf("table '%s': %w", e.Name, err)
	}
	bo := s.buildOptions(opts.Progress)
	bo.SinkName = fmt.Sprintf("Sink %s '%s'", e.Connector, e.Name)
	return plan.Build(n, sink, bo)
}

func (s *Session) insertQuery(ctx context.Context, e *plan.Entry, cols []ast.Ident, q *ast.Query, text string, opts ExecOptions) (Outcome, error) {
	p, err := s.insertPlan(e, cols, q, text, opts)
	if err != nil {
		return Outcome{}, err
	}
	if err := s.setupCheckpoints(ctx, p, "", opts); err != nil {
		return Outcome{}, err
	}
	cm, err := runGraphCommit(ctx, p)
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return Outcome{Message: cancelledInsert(p, e.Name, cm)}, err
		}
		return Outcome{}, err
	}
	rows := p.Root.Exec.Stats.RowsIn.Load()
	return Outcome{Message: fmt.Sprintf("%d row(s) inserted into '%s'.", rows, e.Name)}, nil
}

// deliveryCounter is a sink that counts the rows its destination has
// acknowledged (the Kafka sink), as opposed to the rows it was given.
type deliveryCounter interface {
	Produced() int64
}

// cancelledInsert says what a cancelled INSERT left behind: how many rows
// reached the table, when the sink counts what its destination
// acknowledged (rows given to another sink may not be published: a
// Parquet file in progress), and whether the source will read them again.
func cancelledInsert(p *plan.Physical, table string, cm commitOutcome) string {
	msg := "Cancelled"
	if d, ok := p.Root.Exec.Op.(deliveryCounter); ok {
		msg = fmt.Sprintf("Cancelled: %d row(s) delivered to '%s'", d.Produced(), table)
	}
	switch cm {
	case committed:
		return msg + "; the source offsets are committed up to the last row delivered."
	case notCommitted:
		return msg + "; the source offsets were not committed: the next run reads those records again."
	case checkpointed:
		if st := p.Graph.CheckpointStats(); st.Completed > 0 {
			return fmt.Sprintf("%s; the next run with the same 'pipeline.name' resumes from checkpoint %d.", msg, st.LastID)
		}
		return msg + "; no checkpoint completed: the next run starts afresh."
	}
	if msg == "Cancelled" {
		return "" // the shell says that much
	}
	return msg + "."
}

// placeColumns puts a query's columns under the named table columns,
// NULL in the others.
func placeColumns(n plan.Node, schema *arrow.Schema, cols []ast.Ident, text string) (plan.Node, error) {
	in := n.Schema()
	if len(cols) != in.NumFields() {
		return nil, sql.ErrorAt(text, cols[0].Pos(), fmt.Sprintf("INSERT has %d target columns but the query gives %d values", len(cols), in.NumFields()))
	}
	src := make([]int, schema.NumFields())
	for i := range src {
		src[i] = -1
	}
	for j, c := range cols {
		found := -1
		for i, f := range schema.Fields() {
			if strings.EqualFold(f.Name, c.Name) {
				found = i
			}
		}
		if found < 0 {
			return nil, sql.ErrorAt(text, c.Pos(), fmt.Sprintf("column '%s' of the table does not exist", c.Name))
		}
		if src[found] >= 0 {
			return nil, sql.ErrorAt(text, c.Pos(), fmt.Sprintf("column '%s' is given twice", c.Name))
		}
		src[found] = j
	}
	exprs := make([]plan.Expr, schema.NumFields())
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
		if src[i] < 0 {
			if !f.Nullable {
				return nil, fmt.Errorf("column '%s' is NOT NULL and gets no value", f.Name)
			}
			exprs[i] = plan.NewConst(nil, f.Type)
			continue
		}
		exprs[i] = plan.NewColRef(src[i], in.Field(src[i]).Name, in.Field(src[i]).Type)
	}
	return plan.NewProject(n, exprs, names), nil
}

// runStatementSet runs INSERTs as one job: planned first (a bad one stops
// them all before anything runs), then run together.
func (s *Session) runStatementSet(ctx context.Context, set []pendingInsert, opts ExecOptions) (Outcome, error) {
	if len(set) == 0 {
		return Outcome{Message: "Empty statement set: nothing to run."}, nil
	}
	type job struct {
		p    *plan.Physical
		name string
	}
	var jobs []job
	for _, pi := range set {
		name := pi.x.Table.Parts[len(pi.x.Table.Parts)-1].Name
		e, ok := s.cat.Lookup(name)
		if !ok {
			return Outcome{}, sql.ErrorAt(pi.text, pi.x.Table.Pos(), fmt.Sprintf("table '%s' not found", name))
		}
		p, err := s.insertPlan(e, pi.x.Columns, pi.x.Query, pi.text, opts)
		if err != nil {
			return Outcome{}, err
		}
		if err := s.setupCheckpoints(ctx, p, strconv.Itoa(len(jobs)+1), opts); err != nil {
			return Outcome{}, fmt.Errorf("INSERT INTO '%s': %w", e.Name, err)
		}
		jobs = append(jobs, job{p, e.Name})
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = runGraph(ctx, j.p); errs[i] != nil {
				cancel() // one failing insert stops the job
			}
		}()
	}
	wg.Wait()
	var msgs []string
	for i, j := range jobs {
		if errs[i] != nil {
			return Outcome{}, fmt.Errorf("INSERT INTO '%s': %w", j.name, errs[i])
		}
		msgs = append(msgs, fmt.Sprintf("%d row(s) inserted into '%s'.", j.p.Root.Exec.Stats.RowsIn.Load(), j.name))
	}
	return Outcome{Message: strings.Join(msgs, "\n")}, nil
}
