package engine

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/connectors/memory"
	"github.com/clink-sql/clink/plan"
	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

// createSessionTable creates a table without a connector: held in memory
// by the session as Arrow record batches (connectors/memory), filled by
// INSERT and by CREATE TABLE ... AS query.
func (s *Session) createSessionTable(ctx context.Context, x *ast.CreateTable, name string, declared *arrow.Schema, text string, opts ExecOptions) (Outcome, error) {
	if declared == nil && x.As != nil {
		n, _, err := s.planQuery(x.As, text)
		if err != nil {
			return Outcome{}, err
		}
		fs := make([]arrow.Field, n.Schema().NumFields())
		for i, f := range n.Schema().Fields() {
			f.Nullable = true
			if f.Type.ID() == arrow.NULL {
				f.Type = arrow.BinaryTypes.String // an all-NULL column, as VALUES types it
			}
			fs[i] = f
		}
		declared = arrow.NewSchema(fs, nil)
	}
	if declared == nil || declared.NumFields() == 0 {
		return Outcome{}, sql.ErrorAt(text, x.Pos(), fmt.Sprintf("CREATE TABLE %s: declare its columns, give WITH ('connector' = ...) or AS query", name))
	}
	tbl := memory.NewTable(declared, s.mem)
	e := &plan.Entry{Name: name, Table: tbl, Connector: "memory", Session: true}
	if err := s.cat.Add(e, false); err != nil {
		_ = tbl.Close()
		return Outcome{}, err
	}
	msg := fmt.Sprintf("Table '%s' created.", name)
	if x.As != nil {
		out, err := s.insertQuery(ctx, e, nil, x.As, text, opts)
		if err != nil {
			s.cat.Drop(name)
			_ = tbl.Close()
			return Outcome{}, err
		}
		msg += " " + out.Message
	}
	return Outcome{Message: msg}, nil
}
