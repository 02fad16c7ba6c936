package main

import (
	"fmt"
	"reflect"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// resultModeKey is Flink's SQL client setting for how an updating result
// (a changelog: GROUP BY over an unbounded input) is shown:
//
//	tableau   (default) rows print as they arrive, with their kind (op) first
//	changelog the same: every +I, -U, +U and -D row, as it arrives
//	table     the changelog is applied to a table, printed when the query
//	          ends (LIMIT, Ctrl-C, the end of a bounded input)
//
// Results that are not changelogs print the same in every mode.
const resultModeKey = "sql-client.execution.result-mode"

// settings is what the shell asks of a session that has session settings.
type settings interface {
	Settings() map[string]string
}

func (sh *shell) resultMode() string {
	if s, ok := sh.sess.(settings); ok {
		if m := s.Settings()[resultModeKey]; m != "" {
			return m
		}
	}
	return "tableau"
}

// tableModeSink applies a changelog to a table and hands the table to the
// format's sink when the query ends. A result without a leading "op"
// column passes straight through.
type tableModeSink struct {
	inner     sink
	changelog bool
	schema    *arrow.Schema // without op
	rows      []exec.Row
}

func (t *tableModeSink) Columns(s *arrow.Schema, bounded bool) error {
	if s.NumFields() == 0 || s.Field(0).Name != "op" || s.Field(0).Type.ID() != arrow.STRING {
		return t.inner.Columns(s, bounded)
	}
	t.changelog = true
	t.schema = arrow.NewSchema(s.Fields()[1:], nil)
	return t.inner.Columns(t.schema, true)
}

func (t *tableModeSink) Batch(b *exec.Batch) error {
	if !t.changelog {
		return t.inner.Batch(b)
	}
	for i := 0; i < b.Len(); i++ {
		row := make(exec.Row, b.Schema().NumFields())
		for c := range row {
			if b.IsColumnar() {
				row[c] = exec.Value(b.Record().Column(c), i)
			} else {
				row[c] = b.Rows()[i][c]
			}
		}
		op, vals := row[0], row[1:]
		switch op {
		case "+I", "+U":
			t.rows = append(t.rows, vals)
		case "-U", "-D":
			for j, r := range t.rows {
				if reflect.DeepEqual(r, vals) {
					t.rows = append(t.rows[:j], t.rows[j+1:]...)
					break
				}
			}
		default:
			return fmt.Errorf("result mode table: unknown row kind %v", op)
		}
	}
	return nil
}

func (t *tableModeSink) finish(err error) error {
	if t.changelog && len(t.rows) > 0 {
		b := exec.NewRowBatch(t.schema, t.rows)
		berr := t.inner.Batch(b)
		b.Release()
		if berr != nil && err == nil {
			err = berr
		}
	}
	return t.inner.finish(err)
}
