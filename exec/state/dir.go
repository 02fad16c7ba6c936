package state

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// A pipeline's checkpoints on disk: DIR/NAME/chk-N/ holds one Arrow IPC
// file per Records part of each stage and, written last, the manifest
// (manifest.json: the id, the plan's fingerprint, each stage's parts with
// their files and sizes, and its small Value parts inline). Every file is
// written to a temporary name, fsynced and renamed, and the directory is
// fsynced after the manifest's rename: a checkpoint with a manifest is
// complete, one without is a crash's leftover and is ignored (and removed
// by the next checkpoint of that id or by retention).

// ManifestName is the file whose presence makes a checkpoint complete.
const ManifestName = "manifest.json"

// Manifest describes one complete checkpoint.
type Manifest struct {
	ID          int64           `json:"id"`
	Fingerprint string          `json:"fingerprint"`
	Created     time.Time       `json:"created"`
	Size        int64           `json:"size"`
	Stages      []ManifestStage `json:"stages"`
}

// ManifestStage is one stage's state in a checkpoint.
type ManifestStage struct {
	ID     int               `json:"id"`
	Values map[string][]byte `json:"values,omitempty"`
	Parts  []ManifestPart    `json:"parts,omitempty"`
}

// ManifestPart is one Records part: its Arrow IPC file and bytes.
type ManifestPart struct {
	Name string `json:"name"`
	File string `json:"file"`
	Size int64  `json:"size"`
}

// Dir is one pipeline's checkpoint directory, an exec.CheckpointStore.
type Dir struct {
	path        string
	retain      int
	fingerprint string
}

// OpenDir opens (creating it) the checkpoint directory path, keeping the
// last retain complete checkpoints; fingerprint identifies the plan the
// checkpoints are of. It fails when the directory cannot be written.
func OpenDir(path string, retain int, fingerprint string) (*Dir, error) {
	if retain < 1 {
		retain = 1
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("checkpoint directory %s: %w", path, err)
	}
	f, err := os.CreateTemp(path, ".probe-*")
	if err != nil {
		return nil, fmt.Errorf("checkpoint directory %s is not writable: %w", path, err)
	}
	f.Close()
	os.Remove(f.Name())
	return &Dir{path: path, retain: retain, fingerprint: fingerprint}, nil
}

// Path is the directory.
func (d *Dir) Path() string { return d.path }

func chkName(id int64) string { return "chk-" + strconv.FormatInt(id, 10) }

// Checkpoints lists the complete checkpoints' ids, oldest first.
func (d *Dir) Checkpoints() ([]int64, error) {
	ids, err := listChk(d.path)
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(d.path, chkName(id), ManifestName)); err == nil {
			out = append(out, id)
		}
	}
	return out, nil
}

// listChk lists every chk-N directory's id, complete or not, ascending.
func listChk(path string) ([]int64, error) {
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint directory %s: %w", path, err)
	}
	var ids []int64
	for _, e := range ents {
		if rest, ok := strings.CutPrefix(e.Name(), "chk-"); ok && e.IsDir() {
			if id, err := strconv.ParseInt(rest, 10, 64); err == nil {
				ids = append(ids, id)
			}
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// Latest is the newest complete checkpoint's directory; ok is false when
// there is none.
func (d *Dir) Latest() (path string, ok bool, err error) {
	ids, err := d.Checkpoints()
	if err != nil || len(ids) == 0 {
		return "", false, err
	}
	return filepath.Join(d.path, chkName(ids[len(ids)-1])), true, nil
}

// Begin implements exec.CheckpointStore.
func (d *Dir) Begin(id int64) (exec.CheckpointWriter, error) {
	dir := filepath.Join(d.path, chkName(id))
	if err := os.RemoveAll(dir); err != nil { // a crashed attempt's leftover
		return nil, fmt.Errorf("removing %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	return &dirWriter{d: d, id: id, dir: dir, stages: map[int]*dirStage{}}, nil
}

type dirWriter struct {
	d   *Dir
	id  int64
	dir string

	mu     sync.Mutex
	stages map[int]*dirStage
}

// Stage implements exec.CheckpointWriter.
func (w *dirWriter) Stage(id int) exec.StateWriter {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := &dirStage{w: w, m: ManifestStage{ID: id, Values: map[string][]byte{}}}
	w.stages[id] = st
	return st
}

// Commit writes the manifest last, then drops the checkpoints past the
// retained number.
func (w *dirWriter) Commit() (int64, error) {
	w.mu.Lock()
	m := Manifest{ID: w.id, Fingerprint: w.d.fingerprint, Created: time.Now().UTC()}
	for _, st := range w.stages {
		st.mu.Lock()
		m.Stages = append(m.Stages, st.m)
		for _, p := range st.m.Parts {
			m.Size += p.Size
		}
		st.mu.Unlock()
	}
	w.mu.Unlock()
	sort.Slice(m.Stages, func(i, j int) bool { return m.Stages[i].ID < m.Stages[j].ID })
	b, err := json.MarshalIndent(&m, "", " ")
	if err != nil {
		return 0, err
	}
	m.Size += int64(len(b))
	if _, err := writeAtomic(w.dir, ManifestName, func(f io.Writer) error {
		_, err := f.Write(b)
		return err
	}); err != nil {
		return 0, err
	}
	if err := syncDir(w.dir); err != nil {
		return 0, err
	}
	w.d.prune(w.id)
	return m.Size, nil
}

// Abort implements exec.CheckpointWriter.
func (w *dirWriter) Abort() { os.RemoveAll(w.dir) }

// prune keeps the retained complete checkpoints up to newest and removes
// everything older (complete or a leftover).
func (d *Dir) prune(newest int64) {
	ids, err := listChk(d.path)
	if err != nil {
		return
	}
	kept := 0
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		if id > newest {
			continue
		}
		dir := filepath.Join(d.path, chkName(id))
		if _, err := os.Stat(filepath.Join(dir, ManifestName)); err == nil && kept < d.retain {
			kept++
			continue
		}
		os.RemoveAll(dir)
	}
}

type dirStage struct {
	w  *dirWriter
	mu sync.Mutex
	m  ManifestStage
}

// Records implements exec.StateWriter: one IPC file per part.
func (st *dirStage) Records(name string, schema *arrow.Schema, recs ...arrow.RecordBatch) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, p := range st.m.Parts {
		if p.Name == name {
			return fmt.Errorf("state part %q written twice", name)
		}
	}
	file := fmt.Sprintf("s%d-p%d.arrow", st.m.ID, len(st.m.Parts))
	size, err := writeAtomic(st.w.dir, file, func(w io.Writer) error { return WriteIPC(w, schema, recs) })
	if err != nil {
		return fmt.Errorf("state part %q: %w", name, err)
	}
	st.m.Parts = append(st.m.Parts, ManifestPart{Name: name, File: file, Size: size})
	return nil
}

// Value implements exec.StateWriter: kept in the manifest.
func (st *dirStage) Value(name string, v []byte) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, dup := st.m.Values[name]; dup {
		return fmt.Errorf("state value %q written twice", name)
	}
	st.m.Values[name] = append([]byte(nil), v...)
	return nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeAtomic writes dir/name through a temporary file, fsynced before the
// rename, so the name holds either nothing or the whole file.
func writeAtomic(dir, name string, write func(io.Writer) error) (int64, error) {
	f, err := os.CreateTemp(dir, ".tmp-"+name+"-*")
	if err != nil {
		return 0, err
	}
	tmp := f.Name()
	fail := func(err error) (int64, error) {
		f.Close()
		os.Remove(tmp)
		return 0, fmt.Errorf("writing %s: %w", filepath.Join(dir, name), err)
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	cw := &countingWriter{w: bw}
	if err := write(cw); err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return 0, fmt.Errorf("writing %s: %w", filepath.Join(dir, name), err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		os.Remove(tmp)
		return 0, fmt.Errorf("writing %s: %w", filepath.Join(dir, name), err)
	}
	return cw.n, nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

// Loaded is a complete checkpoint read back, an exec.CheckpointReader.
type Loaded struct {
	Manifest Manifest
	dir      string
	mem      memory.Allocator
	stages   map[int]*ManifestStage
}

// ErrPlanChanged is returned by Load for a checkpoint of another plan.
var ErrPlanChanged = errors.New("the checkpoint was taken of a different plan")

// Load reads the complete checkpoint in dir (a chk-N directory) for a plan
// of the given fingerprint; state batches are allocated from mem.
func Load(dir, fingerprint string, mem memory.Allocator) (*Loaded, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a complete checkpoint (no %s)", dir, ManifestName)
		}
		return nil, err
	}
	l := &Loaded{dir: dir, mem: mem, stages: map[int]*ManifestStage{}}
	if err := json.Unmarshal(b, &l.Manifest); err != nil {
		return nil, fmt.Errorf("checkpoint %s: manifest: %w", dir, err)
	}
	if l.Manifest.Fingerprint != fingerprint {
		return nil, fmt.Errorf("checkpoint %s: %w (fingerprint %s, this statement's %s); use another 'pipeline.name' or remove the directory to start afresh",
			dir, ErrPlanChanged, l.Manifest.Fingerprint, fingerprint)
	}
	for i := range l.Manifest.Stages {
		st := &l.Manifest.Stages[i]
		l.stages[st.ID] = st
	}
	return l, nil
}

// ID is the checkpoint's id.
func (l *Loaded) ID() int64 { return l.Manifest.ID }

// Stage implements exec.CheckpointReader.
func (l *Loaded) Stage(id int) (exec.StateReader, bool) {
	st, ok := l.stages[id]
	if !ok {
		return nil, false
	}
	return loadedStage{l: l, st: st}, true
}

type loadedStage struct {
	l  *Loaded
	st *ManifestStage
}

func (s loadedStage) Records(name string) (*arrow.Schema, []arrow.RecordBatch, bool, error) {
	for _, p := range s.st.Parts {
		if p.Name != name {
			continue
		}
		f, err := os.Open(filepath.Join(s.l.dir, p.File))
		if err != nil {
			return nil, nil, true, fmt.Errorf("state part %q: %w", name, err)
		}
		defer f.Close()
		schema, recs, err := ReadIPC(bufio.NewReader(f), s.l.mem)
		if err != nil {
			return nil, nil, true, fmt.Errorf("state part %q (%s): %w", name, p.File, err)
		}
		return schema, recs, true, nil
	}
	return nil, nil, false, nil
}

func (s loadedStage) Value(name string) ([]byte, bool, error) {
	v, ok := s.st.Values[name]
	return v, ok, nil
}
