package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/connectors/parquet"
	"github.com/clink-sql/clink/plan"
	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

// createTable runs CREATE TABLE: a connector's table (WITH ('connector' =
// ...)), or without WITH a session table held in memory; AS query fills
// either with the query's rows (its columns when none are declared).
func (s *Session) createTable(ctx context.Context, x *ast.CreateTable, text string, opts ExecOptions) (Outcome, error) {
	name := x.Name.Parts[len(x.Name.Parts)-1].Name
	at := func(n ast.Node, msg string) error { return sql.ErrorAt(text, n.Pos(), msg) }
	if _, exists := s.cat.Lookup(name); exists {
		if x.IfNotExists {
			return Outcome{Message: fmt.Sprintf("Table '%s' already exists.", name)}, nil
		}
		return Outcome{}, at(&x.Name, fmt.Sprintf("table or view '%s' already exists", name))
	}
	if len(x.PartitionedBy) > 0 {
		return Outcome{}, at(&x.PartitionedBy[0], "PARTITIONED BY is not supported yet: the filesystem sink writes one directory")
	}
	options := map[string]string{}
	for _, o := range x.Options {
		options[strings.ToLower(o.Key)] = o.Value
	}
	// Physical and METADATA columns go to the connector (a METADATA column
	// as option 'metadata.<col>' = '<key>'); computed columns stay with the
	// catalog and are evaluated above the scan.
	var declared *arrow.Schema
	var computed []plan.ComputedColumn
	if x.Columns != nil {
		var fs []arrow.Field
		for _, c := range x.Columns {
			if c.Computed != nil {
				computed = append(computed, plan.ComputedColumn{Name: c.Name.Name, Expr: c.Computed, Text: text})
				continue
			}
			t, err := sql.TypeOf(c.Type)
			if err != nil {
				return Outcome{}, err
			}
			if c.Metadata != nil {
				key := c.Metadata.Key
				if key == "" {
					key = c.Name.Name
				}
				options["metadata."+c.Name.Name] = key
			}
			fs = append(fs, arrow.Field{Name: c.Name.Name, Type: t, Nullable: !c.NotNull})
		}
		declared = arrow.NewSchema(fs, nil)
	}
	var wm *plan.WatermarkDef
	if x.Watermark != nil {
		wm = &plan.WatermarkDef{Column: x.Watermark.Column.Name, Expr: x.Watermark.Expr, Text: text}
	}
	if x.Options == nil {
		if len(computed) > 0 || wm != nil || hasMetadata(x.Columns) {
			return Outcome{}, at(x, "computed, METADATA and WATERMARK columns need a connector: add WITH ('connector' = ...)")
		}
		return s.createSessionTable(ctx, x, name, declared, text, opts)
	}
	cname := options["connector"]
	if cname == "" {
		return Outcome{}, at(x, fmt.Sprintf("table '%s': WITH ('connector' = ...) is required (available: %s)", name, strings.Join(connectors.Names(), ", ")))
	}
	f, ok := connectors.Lookup(cname)
	if !ok {
		return Outcome{}, at(x, fmt.Sprintf("table '%s': unknown connector '%s' (available: %s)", name, cname, strings.Join(connectors.Names(), ", ")))
	}
	if x.As != nil && declared == nil {
		n, _, err := s.planQuery(x.As, text)
		if err != nil {
			return Outcome{}, err
		}
		declared = n.Schema()
	}
	tbl, err := f(options, declared)
	if err != nil {
		if declared == nil && errors.Is(err, parquet.ErrNoFiles) {
			return Outcome{}, at(x, fmt.Sprintf("table '%s': %v (declare the columns to create a table that INSERT INTO writes)", name, err))
		}
		return Outcome{}, at(x, fmt.Sprintf("table '%s': %v", name, err))
	}
	entry := &plan.Entry{Name: name, Table: tbl, Connector: cname, Options: options, Computed: computed, Watermark: wm,
		PrimaryKey: primaryKey(x)}
	if len(computed) > 0 || wm != nil {
		// Bind once now so a bad computed column or watermark fails the
		// CREATE, not the first query.
		tmp := plan.NewCatalog()
		_ = tmp.Add(entry, false)
		if _, err := plan.Bind(tmp, selectAll(x.Name), plan.BindOptions{Text: text}); err != nil {
			return Outcome{}, err
		}
	}
	if err := s.cat.Add(entry, false); err != nil {
		return Outcome{}, err
	}
	msg := fmt.Sprintf("Table '%s' created.", name)
	if x.As != nil {
		out, err := s.insertQuery(ctx, entry, nil, x.As, text, opts)
		if err != nil {
			s.cat.Drop(name)
			return Outcome{}, err
		}
		msg += " " + out.Message
	}
	return Outcome{Message: msg}, nil
}

// primaryKey is the columns of x's PRIMARY KEY, from the table constraint
// or a column's inline PRIMARY KEY.
func primaryKey(x *ast.CreateTable) []string {
	var key []string
	if x.PrimaryKey != nil {
		for _, c := range x.PrimaryKey.Columns {
			key = append(key, c.Name)
		}
	}
	for _, c := range x.Columns {
		if c.PrimaryKey {
			key = append(key, c.Name.Name)
		}
	}
	return key
}

func hasMetadata(cols []*ast.ColumnDef) bool {
	for _, c := range cols {
		if c.Metadata != nil {
			return true
		}
	}
	return false
}

// selectAll is SELECT * FROM name.
func selectAll(name ast.ObjectName) *ast.Query {
	return &ast.Query{Span: name.Span, Body: &ast.Select{Span: name.Span,
		Items: []ast.SelectItem{&ast.Star{Span: name.Span}},
		From:  []ast.TableExpr{&ast.TableName{Span: name.Span, Name: name}}}}
}
