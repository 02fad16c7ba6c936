package parquet

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/sql"
)

// monitorOption is Flink's option that makes a filesystem source
// unbounded: every interval it looks for new files.
const monitorOption = "source.monitor-interval"

// MonitoredTable is a filesystem table read as a stream ('source.monitor-
// interval' set): a scan reads the files present, then, every interval,
// each file that has appeared since in the directory or glob, once. A file
// counts when it is complete: the names a writer uses while writing,
// hidden '.x' and '_x' (clink's own sink writes '.part-*.inprogress' and
// renames it into place; so do Flink's), are never read, and any writer
// that publishes by rename is safe. Watermarks come from the table's
// WATERMARK clause above the scan, as for any source.
//
// INSERT INTO the table writes files as the format's table does (Parquet:
// the dataset's sink), which a monitoring scan then picks up.
type MonitoredTable struct {
	path     string
	format   string
	interval time.Duration
	schema   *arrow.Schema
	// open is the format's bounded table over one file.
	open func(file string) (connectors.Table, error)
	// sink, when the format's table writes, is that table (INSERT INTO).
	sink connectors.Table
}

// newMonitoredTable wraps the format's factory f: options are the table's,
// the monitor interval among them.
func newMonitoredTable(format string, f connectors.Factory, options map[string]string, declared *arrow.Schema) (*MonitoredTable, error) {
	iv, err := sql.ParseDuration(options[monitorOption])
	if err != nil || iv <= 0 {
		return nil, fmt.Errorf("filesystem connector: '%s' = '%s': want a positive duration such as '1s'", monitorOption, options[monitorOption])
	}
	rest := maps.Clone(options)
	delete(rest, monitorOption)
	t := &MonitoredTable{path: rest["path"], format: format, interval: iv, schema: declared}
	t.open = func(file string) (connectors.Table, error) {
		o := maps.Clone(rest)
		o["path"] = file
		return f(o, t.schema)
	}
	files, err := t.list()
	if err != nil {
		return nil, err
	}
	if t.schema == nil {
		if len(files) == 0 {
			return nil, fmt.Errorf("filesystem connector: '%s' has no files yet: declare the table's columns", t.path)
		}
		first, err := t.open(files[0])
		if err != nil {
			return nil, err
		}
		t.schema = first.Schema()
	}
	if format == "parquet" {
		// The dataset writes (INSERT INTO), with the table's options;
		// with no files yet it is only that.
		if t.sink, err = f(rest, t.schema); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Schema implements connectors.Table.
func (t *MonitoredTable) Schema() *arrow.Schema { return t.schema }

// Bounded implements connectors.Table: a monitored scan never ends.
func (t *MonitoredTable) Bounded() bool { return false }

// Describe implements connectors.Table.
func (t *MonitoredTable) Describe() string {
	return fmt.Sprintf("%s '%s', monitored every %s", t.format, t.path, t.interval)
}

// Interval is the monitor interval.
func (t *MonitoredTable) Interval() time.Duration { return t.interval }

// OpenSink implements connectors.SinkTable when the format writes.
func (t *MonitoredTable) OpenSink(spec connectors.SinkSpec) (exec.Operator, error) {
	if s, ok := t.sink.(connectors.SinkTable); ok {
		return s.OpenSink(spec)
	}
	return nil, fmt.Errorf("filesystem connector: format '%s' cannot be written", t.format)
}

// list is the complete files the path names now, sorted: the file itself,
// a directory's files (for Parquet, its *.parquet ones), or a glob's
// matches; names starting with '.' or '_' are in progress or metadata.
func (t *MonitoredTable) list() ([]string, error) {
	var cands []string
	if strings.ContainsAny(t.path, "*?[") {
		m, err := filepath.Glob(t.path)
		if err != nil {
			return nil, fmt.Errorf("filesystem connector: bad glob '%s': %w", t.path, err)
		}
		cands = m
	} else {
		st, err := os.Stat(t.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, nil // nothing yet: the files may come
		case err != nil:
			return nil, fmt.Errorf("filesystem connector: %w", err)
		case !st.IsDir():
			return []string{t.path}, nil
		}
		ents, err := os.ReadDir(t.path)
		if err != nil {
			return nil, fmt.Errorf("filesystem connector: %w", err)
		}
		for _, e := range ents {
			if t.format != "parquet" || strings.HasSuffix(strings.ToLower(e.Name()), ".parquet") {
				cands = append(cands, filepath.Join(t.path, e.Name()))
			}
		}
	}
	var files []string
	for _, p := range cands {
		if b := filepath.Base(p); strings.HasPrefix(b, ".") || strings.HasPrefix(b, "_") {
			continue
		}
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			files = append(files, p)
		}
	}
	sort.Strings(files)
	return files, nil
}

// Open implements connectors.Table: one source (a monitored table is read
// by one instance, which keeps the set of files read).
func (t *MonitoredTable) Open(spec connectors.ScanSpec) (exec.Source, error) {
	spec.Split, spec.Splits, spec.Share = 0, 0, nil
	return &monitorSource{t: t, spec: spec, seen: map[string]bool{}, sleep: exec.Sleep}, nil
}

// monitorSource reads each file as it appears.
type monitorSource struct {
	t     *MonitoredTable
	spec  connectors.ScanSpec
	seen  map[string]bool
	files int64
	sleep func(ctx context.Context, d time.Duration) error
}

func (s *monitorSource) Kind() string { return "file_monitor_scan" }

func (s *monitorSource) Capabilities() exec.Capabilities {
	return exec.Capabilities{EmitsColumnar: true}
}

// Report implements exec.Reporter.
func (s *monitorSource) Report() exec.OperatorReport {
	return exec.OperatorReport{Counters: []exec.NamedCount{{Name: "files read", Value: s.files}}}
}

// Run reads the new files, waits an interval, and again, until ctx ends
// or the consumer stops.
func (s *monitorSource) Run(ctx context.Context, out exec.Emitter) error {
	for {
		files, err := s.t.list()
		if err != nil {
			return err
		}
		for _, f := range files {
			if s.seen[f] {
				continue
			}
			s.seen[f] = true
			if err := s.read(ctx, f, out); err != nil {
				if errors.Is(err, exec.ErrStop) {
					return nil
				}
				return err
			}
			s.files++
		}
		if err := s.sleep(ctx, s.t.interval); err != nil {
			return err
		}
	}
}

// read runs the format's source over one file.
func (s *monitorSource) read(ctx context.Context, file string, out exec.Emitter) error {
	tbl, err := s.t.open(file)
	if err != nil {
		return fmt.Errorf("filesystem connector: '%s': %w", file, err)
	}
	src, err := tbl.Open(s.spec)
	if err != nil {
		return fmt.Errorf("filesystem connector: '%s': %w", file, err)
	}
	return src.Run(ctx, noEndWatermark{out})
}

// noEndWatermark passes a file's batches on but not its watermarks: the
// format's source ends each file with the final watermark of a bounded
// input, which would close every window of the stream (and make each
// later file's rows late). The stream's watermarks come from its
// WATERMARK clause, above the scan.
type noEndWatermark struct{ exec.Emitter }

func (noEndWatermark) EmitWatermark(context.Context, int64) error { return nil }
