// Package csvfile reads CSV files ('connector' = 'filesystem', 'format' =
// 'csv'): bounded tables of a file or a glob, decoded by Arrow's CSV
// reader straight into columns of the declared types. It is what a small
// side table (Nexmark q13's side input) needs, not a tuned bulk reader.
package csvfile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

const defaultBatchSize = 8192

// Table is a set of CSV files of one declared schema, without a header
// row (Flink's CSV format has none).
type Table struct {
	path   string
	files  []string
	schema *arrow.Schema
	comma  rune
	null   string
	mem    memory.Allocator
}

// NewTable builds a table from its WITH options: 'path' (a file or a
// glob), 'csv.field-delimiter' (one character, default ','), and
// 'csv.null-literal' (the text of NULL; default: an empty field is NULL
// except in a VARCHAR column). declared is required: CSV has no types.
func NewTable(options map[string]string, declared *arrow.Schema) (*Table, error) {
	t := &Table{path: options["path"], comma: ',', schema: declared, mem: memory.DefaultAllocator}
	for k, v := range options {
		switch k {
		case "connector", "path":
		case "format":
			if v != "csv" {
				return nil, fmt.Errorf("filesystem csv: option 'format' = '%s': this reader is for 'csv'", v)
			}
		case "csv.field-delimiter":
			r, n := utf8.DecodeRuneInString(v)
			if n == 0 || n != len(v) {
				return nil, fmt.Errorf("filesystem csv: 'csv.field-delimiter' must be one character, not '%s'", v)
			}
			t.comma = r
		case "csv.null-literal":
			t.null = v
		default:
			return nil, fmt.Errorf("filesystem csv: unknown option '%s' (known: path, csv.field-delimiter, csv.null-literal)", k)
		}
	}
	if t.path == "" {
		return nil, fmt.Errorf("filesystem csv: option 'path' is required")
	}
	if declared == nil || declared.NumFields() == 0 {
		return nil, fmt.Errorf("filesystem csv '%s': declare the table's columns (CSV carries no schema)", t.path)
	}
	files, err := globFiles(t.path)
	if err != nil {
		return nil, err
	}
	t.files = files
	return t, nil
}

// Schema implements connectors.Table.
func (t *Table) Schema() *arrow.Schema { return t.schema }

// Bounded implements connectors.Table.
func (t *Table) Bounded() bool { return true }

// Describe implements connectors.Table.
func (t *Table) Describe() string {
	return fmt.Sprintf("csv '%s' (%d files)", t.path, len(t.files))
}

// Open implements connectors.Table.
func (t *Table) Open(spec connectors.ScanSpec) (exec.Source, error) {
	cols, out, err := connectors.ScanColumns(t.schema, spec)
	if err != nil {
		return nil, fmt.Errorf("filesystem csv: %w", err)
	}
	size := spec.BatchSize
	if size <= 0 {
		size = defaultBatchSize
	}
	return &source{t: t, cols: cols, out: out, size: size}, nil
}

// source reads the files in order, one batch per chunk of rows.
type source struct {
	t    *Table
	cols []int
	out  *arrow.Schema
	size int
}

func (s *source) Kind() string { return "csv_scan" }

func (s *source) Capabilities() exec.Capabilities { return exec.Capabilities{EmitsColumnar: true} }

func (s *source) Run(ctx context.Context, out exec.Emitter) error {
	for _, f := range s.t.files {
		if err := s.readFile(ctx, f, out); err != nil {
			return err
		}
	}
	return nil
}

func (s *source) readFile(ctx context.Context, name string, out exec.Emitter) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("filesystem csv: %w", err)
	}
	defer f.Close()
	opts := []csv.Option{csv.WithComma(s.t.comma), csv.WithChunk(s.size), csv.WithAllocator(s.t.mem)}
	if s.t.null != "" {
		opts = append(opts, csv.WithNullReader(true, s.t.null))
	} else {
		opts = append(opts, csv.WithNullReader(false, ""))
	}
	r := csv.NewReader(f, s.t.schema, opts...)
	defer r.Release()
	for r.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec := r.RecordBatch()
		picked := make([]arrow.Array, len(s.cols))
		for i, c := range s.cols {
			picked[i] = rec.Column(c)
		}
		b := exec.NewColumnarBatch(array.NewRecordBatch(s.out, picked, rec.NumRows()))
		err := out.Emit(ctx, b)
		b.Release()
		if err != nil {
			return err
		}
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("filesystem csv '%s': %w", name, err)
	}
	return nil
}

// globFiles is the files a path names, in order: itself, or a glob's
// matches (hidden and in-progress names, '.x' and '_x', left out).
func globFiles(path string) ([]string, error) {
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		return []string{path}, nil
	}
	all, err := filepath.Glob(path)
	if err != nil {
		return nil, fmt.Errorf("filesystem csv: bad pattern '%s': %w", path, err)
	}
	var out []string
	for _, m := range all {
		if base := filepath.Base(m); !strings.HasPrefix(base, ".") && !strings.HasPrefix(base, "_") {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("filesystem csv: no file matches '%s'", path)
	}
	sort.Strings(out)
	return out, nil
}
