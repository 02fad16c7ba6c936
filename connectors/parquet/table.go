// Package parquet is clink's Parquet connector ('connector' = 'filesystem',
// 'format' = 'parquet'): a connectors.Table over one file, a glob or a
// directory of files, whose scan decodes pages straight into Arrow buffers
// (born-columnar batches) and skips row groups whose statistics exclude a
// pushed-down filter; and a sink (sink.go) that INSERT INTO uses to write
// each statement's rows as one new file, Arrow record by Arrow record. The
// catalog holds a Dataset (dataset.go), which lists the files again at
// every scan so that it sees what INSERTs wrote. The filesystem connector's
// other formats plug in through RegisterFormatFactory (factory.go).
//
// It reads through parquet-go's page API: each page's decoded values
// (Page.Data) are copied, scattered by the definition levels, into Arrow
// buffers; dictionary pages are decoded through the dictionary. No
// parquet.Row or parquet.Value is built on the scan path.
package parquet

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// Table is a bounded table over one or more Parquet files that share a
// schema. Its footers are read once, by Open.
type Table struct {
	path   string
	files  []*fileInfo
	schema *arrow.Schema
	mem    memory.Allocator
}

// fileInfo is one file's footer and how each table column is read from it.
type fileInfo struct {
	path string
	meta *format.FileMetaData
	cols []binding // by table column
}

var _ connectors.Table = (*Table)(nil)

// Open opens the Parquet table at path: a file, a glob ('data/*.parquet')
// or a directory (every *.parquet inside, sorted). The schema comes from
// the first file's footer; every other file must have the same columns.
// When declared is not nil, its columns are resolved by name (exact, then
// case-insensitive) in every file and must have the file's type (a file
// INT32 may be read as BIGINT, FLOAT as DOUBLE, and timestamps convert
// between units).
func Open(path string, declared *arrow.Schema) (*Table, error) {
	paths, err := expandPath(path)
	if err != nil {
		return nil, err
	}
	return openFiles(path, paths, declared)
}

// openFiles reads the footers of paths (at least one) as the table at path.
func openFiles(path string, paths []string, declared *arrow.Schema) (*Table, error) {
	t := &Table{path: path, mem: memory.DefaultAllocator}
	for i, p := range paths {
		meta, err := readFooter(p)
		if err != nil {
			return nil, err
		}
		cols, err := fileColumns(p, meta.Schema)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			if t.schema, err = tableSchema(p, cols, declared); err != nil {
				return nil, err
			}
		}
		fi := &fileInfo{path: p, meta: meta, cols: make([]binding, t.schema.NumFields())}
		for c, f := range t.schema.Fields() {
			fc := findColumn(cols, f.Name)
			if fc == nil {
				if declared == nil {
					return nil, fmt.Errorf("parquet: %s: column %s is missing (it is in %s)", p, f.Name, paths[0])
				}
				return nil, fmt.Errorf("parquet: %s: column %s is missing", p, f.Name)
			}
			if fi.cols[c], err = bind(p, fc, f.Type); err != nil {
				return nil, err
			}
		}
		t.files = append(t.files, fi)
	}
	return t, nil
}

// WithAllocator makes the table's scans allocate their Arrow buffers from
// mem (default memory.DefaultAllocator). It returns t.
func (t *Table) WithAllocator(mem memory.Allocator) *Table {
	t.mem = mem
	return t
}

// Schema is the table's schema.
func (t *Table) Schema() *arrow.Schema { return t.schema }

// Bounded is true: a scan of files ends.
func (t *Table) Bounded() bool { return true }

// Files lists the table's files, in scan order.
func (t *Table) Files() []string {
	out := make([]string, len(t.files))
	for i, f := range t.files {
		out[i] = f.path
	}
	return out
}

// NumRows is the total row count from the footers.
func (t *Table) NumRows() int64 {
	var n int64
	for _, f := range t.files {
		n += f.meta.NumRows
	}
	return n
}

// RowGroups is the total number of row groups in the table's files.
func (t *Table) RowGroups() int {
	n := 0
	for _, f := range t.files {
		n += len(f.meta.RowGroups)
	}
	return n
}

// Describe is "parquet 'path' (N files)" for EXPLAIN.
func (t *Table) Describe() string {
	if len(t.files) == 1 {
		return fmt.Sprintf("parquet '%s'", t.path)
	}
	return fmt.Sprintf("parquet '%s' (%d files)", t.path, len(t.files))
}

// Open returns a source producing spec's columns; see Source.
func (t *Table) Open(spec connectors.ScanSpec) (exec.Source, error) {
	return t.NewSource(spec)
}

// tableSchema is the declared schema, checked against the first file, or
// the schema inferred from it.
func tableSchema(path string, cols []fileColumn, declared *arrow.Schema) (*arrow.Schema, error) {
	if declared != nil {
		return declared, nil
	}
	fields := make([]arrow.Field, 0, len(cols))
	for _, c := range cols {
		if c.err != nil {
			return nil, c.err
		}
		fields = append(fields, arrow.Field{Name: c.name, Type: c.typ, Nullable: c.optional})
	}
	return arrow.NewSchema(fields, nil), nil
}

// expandPath turns a path, glob or directory into a sorted list of files;
// finding none is an error.
func expandPath(path string) ([]string, error) {
	files, err := listFiles(path)
	if err != nil || len(files) > 0 {
		return files, err
	}
	if strings.ContainsAny(path, "*?[") {
		return nil, fmt.Errorf("parquet: no files match '%s'", path)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	return nil, fmt.Errorf("parquet: directory '%s' has no *.parquet files", path)
}

// listFiles is expandPath without the "nothing there" errors: a path that
// does not exist, a glob without matches and a directory without Parquet
// files all list no files. A sink-only table (see Dataset) is exactly that
// until its first INSERT.
func listFiles(path string) ([]string, error) {
	if path == "" {
		return nil, fmt.Errorf("parquet: empty path")
	}
	if strings.ContainsAny(path, "*?[") {
		m, err := filepath.Glob(path)
		if err != nil {
			return nil, fmt.Errorf("parquet: bad glob '%s': %w", path, err)
		}
		var files []string
		for _, p := range m {
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				files = append(files, p)
			}
		}
		sort.Strings(files)
		return files, nil
	}
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	var files []string
	for _, e := range ents {
		// Names starting with '.' or '_' are in-progress or metadata files
		// (the sink's own temporary file, Spark's _SUCCESS): not data.
		if n := e.Name(); e.Type().IsRegular() && strings.HasSuffix(strings.ToLower(n), ".parquet") &&
			!strings.HasPrefix(n, ".") && !strings.HasPrefix(n, "_") {
			files = append(files, filepath.Join(path, n))
		}
	}
	sort.Strings(files)
	return files, nil
}

// openFile opens path as a Parquet file. The caller closes the returned
// os.File. parquet-go can panic on corrupt input, so the panic becomes an
// error naming the file.
func openFile(path string) (osf *os.File, pf *parquet.File, err error) {
	osf, err = os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("parquet: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("parquet: %s: not a readable parquet file: %v", path, r)
		}
		if err != nil {
			osf.Close()
			osf, pf = nil, nil
		}
	}()
	st, err := osf.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("parquet: %w", err)
	}
	pf, err = parquet.OpenFile(osf, st.Size(),
		parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true),
		parquet.ReadBufferSize(1<<20))
	if err != nil {
		return nil, nil, fmt.Errorf("parquet: %s: not a readable parquet file: %w", path, err)
	}
	return osf, pf, nil
}

func readFooter(path string) (*format.FileMetaData, error) {
	osf, pf, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer osf.Close()
	meta := pf.Metadata()
	for g := range meta.RowGroups {
		if len(meta.RowGroups[g].Columns) < countLeaves(meta.Schema) {
			return nil, fmt.Errorf("parquet: %s: row group %d has %d column chunks, the schema %d",
				path, g, len(meta.RowGroups[g].Columns), countLeaves(meta.Schema))
		}
	}
	return meta, nil
}

func countLeaves(schema []format.SchemaElement) int {
	n := 0
	for i := 1; i < len(schema); i++ {
		if schema[i].NumChildren.V == 0 {
			n++
		}
	}
	return n
}
