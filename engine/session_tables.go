package engine

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

// createSessionTable creates a table without a connector: held in memory
// by the session as Arrow record batches.
func (s *Session) createSessionTable(ctx context.Context, x *ast.CreateTable, name string, declared *arrow.Schema, text string, opts ExecOptions) (Outcome, error) {
	return Outcome{}, sql.ErrorAt(text, x.Pos(), fmt.Sprintf("table '%s': session tables arrive with connectors/memory", name))
}
