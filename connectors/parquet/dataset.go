package parquet

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// Dataset is the 'filesystem' connector's Parquet table: a file, glob or
// directory whose set of files changes between statements (each INSERT
// INTO adds a file), so every scan lists the files again. Its schema is
// fixed when it is opened: the declared columns, or the first file's.
//
// A Dataset may have no files yet: a table declared with its columns over
// a path that does not exist (or an empty directory) is a sink-only table
// until the first INSERT INTO writes a file; scanning it meanwhile reads
// no rows.
type Dataset struct {
	path   string
	schema *arrow.Schema
	mem    memory.Allocator
	// rowGroupRows is the sink's row group length (tests shrink it).
	rowGroupRows int64

	mu    sync.Mutex
	snap  *Table // the files as last listed
	stamp []fileStamp
}

// fileStamp identifies one version of a listed file: a scan reuses the
// footers read for the same stamps instead of reading them again.
type fileStamp struct {
	path string
	size int64
	mod  int64 // modification time, ns
}

var (
	_ connectors.SinkTable  = (*Dataset)(nil)
	_ connectors.SplitTable = (*Dataset)(nil)
)

// ErrNoFiles is what opening a dataset without declared columns over a path
// with no Parquet files is (errors.Is): there is no schema to read. The
// error itself names the path; a CREATE TABLE adds that declaring the
// columns makes a table INSERT INTO can write.
var ErrNoFiles = errors.New("no Parquet files to read a schema from")

// noFilesError is Open's error for a path with nothing to read, which is
// ErrNoFiles as well.
type noFilesError struct{ error }

func (e noFilesError) Is(target error) bool { return target == ErrNoFiles }
func (e noFilesError) Unwrap() error        { return e.error }

// OpenDataset opens the Parquet dataset at path (a file, a glob or a
// directory; see Open). When declared is nil the schema comes from the
// first file, which must then exist.
func OpenDataset(path string, declared *arrow.Schema) (*Dataset, error) {
	d := &Dataset{path: path, mem: memory.DefaultAllocator, rowGroupRows: SinkRowGroupRows}
	files, stamp, err := d.list()
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		if declared == nil {
			// Open's own error says why there is nothing to infer from.
			_, err := expandPath(path)
			return nil, noFilesError{err}
		}
		d.schema = declared
		d.snap = &Table{path: path, schema: declared, mem: d.mem}
		return d, nil
	}
	t, err := openFiles(path, files, declared)
	if err != nil {
		return nil, err
	}
	d.schema, d.snap, d.stamp = t.schema, t, stamp
	return d, nil
}

// WithAllocator makes the dataset's scans and sinks allocate their Arrow
// memory from mem. It returns d.
func (d *Dataset) WithAllocator(mem memory.Allocator) *Dataset {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mem = mem
	d.snap.mem = mem
	return d
}

// Schema is the dataset's schema.
func (d *Dataset) Schema() *arrow.Schema { return d.schema }

// Bounded is true: a scan of files ends.
func (d *Dataset) Bounded() bool { return true }

// Path is the dataset's path as given.
func (d *Dataset) Path() string { return d.path }

// Describe says what the last scan (or the open) found.
func (d *Dataset) Describe() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.snap.files) == 0 {
		return fmt.Sprintf("parquet '%s' (no files yet)", d.path)
	}
	return d.snap.Describe()
}

// Snapshot lists the files now and returns the table over them (footers
// are read again only for files that changed since the last listing).
func (d *Dataset) Snapshot() (*Table, error) {
	files, stamp, err := d.list()
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if slices.Equal(stamp, d.stamp) {
		return d.snap, nil
	}
	t := &Table{path: d.path, schema: d.schema}
	if len(files) > 0 {
		// The fixed schema is passed as declared so that every version of
		// the dataset is read with the same columns and types.
		if t, err = openFiles(d.path, files, d.schema); err != nil {
			return nil, err
		}
	}
	t.mem = d.mem
	d.snap, d.stamp = t, stamp
	return t, nil
}

// Open returns a source over the files there are now; see Source. The
// parts of a split scan (spec.Splits > 1) all read the listing MaxSplits
// took, so that a file appearing while the statement is planned cannot be
// read by some parts and not others.
func (d *Dataset) Open(spec connectors.ScanSpec) (exec.Source, error) {
	if spec.Splits > 1 {
		d.mu.Lock()
		t := d.snap
		d.mu.Unlock()
		return t.NewSource(spec)
	}
	t, err := d.Snapshot()
	if err != nil {
		return nil, err
	}
	return t.NewSource(spec)
}

// NumRows is the row count of the files as last listed (listed now if they
// never were), from their footers; -1 when they cannot be listed. The
// planner sizes joins with it.
func (d *Dataset) NumRows() int64 {
	d.mu.Lock()
	t := d.snap
	d.mu.Unlock()
	if t == nil {
		var err error
		if t, err = d.Snapshot(); err != nil {
			return -1
		}
	}
	return t.NumRows()
}

// MaxSplits makes the dataset a connectors.SplitTable like Table: it lists
// the files now and splits by their row groups (at least 1).
func (d *Dataset) MaxSplits() int {
	t, err := d.Snapshot()
	if err != nil {
		// Open will report the error; one part is enough to do so.
		return 1
	}
	return max(1, t.MaxSplits())
}

// OpenSink returns the sink for one INSERT INTO statement; see Sink.
func (d *Dataset) OpenSink(spec connectors.SinkSpec) (exec.Operator, error) {
	return d.NewSink(spec)
}

func (d *Dataset) list() ([]string, []fileStamp, error) {
	files, err := listFiles(d.path)
	if err != nil {
		return nil, nil, err
	}
	stamp := make([]fileStamp, 0, len(files))
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return nil, nil, fmt.Errorf("parquet: %w", err)
		}
		stamp = append(stamp, fileStamp{path: f, size: st.Size(), mod: st.ModTime().UnixNano()})
	}
	return files, stamp, nil
}
