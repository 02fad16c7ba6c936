// Package state stores checkpointed operator state. Memory keeps it in
// memory, written and read through Arrow IPC exactly as a checkpoint on
// disk is, so a round trip through it tests what a restore from disk sees.
package state

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// Memory is an in-memory exec.StateWriter and exec.StateReader.
type Memory struct {
	mem    memory.Allocator // for the batches Records returns
	mu     sync.Mutex
	parts  map[string][]byte // IPC stream bytes per Records part
	values map[string][]byte
}

var _ exec.StateWriter = (*Memory)(nil)

// NewMemory returns an empty store whose read batches are allocated from mem.
func NewMemory(mem memory.Allocator) *Memory {
	return &Memory{mem: mem, parts: map[string][]byte{}, values: map[string][]byte{}}
}

// Records implements exec.StateWriter.
func (m *Memory) Records(name string, schema *arrow.Schema, recs ...arrow.RecordBatch) error {
	var buf bytes.Buffer
	if err := WriteIPC(&buf, schema, recs); err != nil {
		return fmt.Errorf("state part %q: %w", name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.parts[name]; dup {
		return fmt.Errorf("state part %q written twice", name)
	}
	m.parts[name] = buf.Bytes()
	return nil
}

// Value implements exec.StateWriter.
func (m *Memory) Value(name string, v []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.values[name]; dup {
		return fmt.Errorf("state value %q written twice", name)
	}
	m.values[name] = bytes.Clone(v)
	return nil
}

// ReadRecords implements exec.StateReader's Records (the writer's method
// of that name is the other direction).
func (m *Memory) ReadRecords(name string) (*arrow.Schema, []arrow.RecordBatch, bool, error) {
	m.mu.Lock()
	b, ok := m.parts[name]
	m.mu.Unlock()
	if !ok {
		return nil, nil, false, nil
	}
	schema, recs, err := ReadIPC(bytes.NewReader(b), m.mem)
	if err != nil {
		return nil, nil, true, fmt.Errorf("state part %q: %w", name, err)
	}
	return schema, recs, true, nil
}

// ReadValue implements exec.StateReader's Value.
func (m *Memory) ReadValue(name string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.values[name]
	return bytes.Clone(v), ok, nil
}

// Reader returns m as an exec.StateReader.
func (m *Memory) Reader() exec.StateReader { return memReader{m} }

type memReader struct{ m *Memory }

func (r memReader) Records(name string) (*arrow.Schema, []arrow.RecordBatch, bool, error) {
	return r.m.ReadRecords(name)
}
func (r memReader) Value(name string) ([]byte, bool, error) { return r.m.ReadValue(name) }

// Size is the bytes held, for tests and metrics.
func (m *Memory) Size() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, b := range m.parts {
		n += len(b)
	}
	for _, v := range m.values {
		n += len(v)
	}
	return n
}

// RoundTrip snapshots s into a fresh Memory and restores it into r: the
// test helper every Snapshotter's tests use.
func RoundTrip(ctx context.Context, mem memory.Allocator, s, r exec.Snapshotter) error {
	m := NewMemory(mem)
	if err := s.SnapshotState(ctx, m); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := r.RestoreState(ctx, m.Reader()); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return nil
}

// MemoryStore is an exec.CheckpointStore in memory: each completed
// checkpoint's stages are Memory stores, for tests of graphs.
type MemoryStore struct {
	mem  memory.Allocator
	mu   sync.Mutex
	done map[int64]*MemoryCheckpoint
	last int64
}

// NewMemoryStore returns an empty store; read batches come from mem.
func NewMemoryStore(mem memory.Allocator) *MemoryStore {
	return &MemoryStore{mem: mem, done: map[int64]*MemoryCheckpoint{}}
}

// MemoryCheckpoint is one checkpoint of a MemoryStore, an
// exec.CheckpointWriter while it is written and an exec.CheckpointReader
// once complete.
type MemoryCheckpoint struct {
	ID     int64
	store  *MemoryStore
	mu     sync.Mutex
	stages map[int]*Memory
}

// Begin implements exec.CheckpointStore.
func (s *MemoryStore) Begin(id int64) (exec.CheckpointWriter, error) {
	return &MemoryCheckpoint{ID: id, store: s, stages: map[int]*Memory{}}, nil
}

// Completed lists the complete checkpoints, oldest first.
func (s *MemoryStore) Completed() []*MemoryCheckpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*MemoryCheckpoint, 0, len(s.done))
	for _, c := range s.done {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Latest is the newest complete checkpoint (nil: none).
func (s *MemoryStore) Latest() *MemoryCheckpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done[s.last]
}

// Stage implements exec.CheckpointWriter.
func (c *MemoryCheckpoint) Stage(id int) exec.StateWriter {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := NewMemory(c.store.mem)
	c.stages[id] = m
	return m
}

// Commit implements exec.CheckpointWriter.
func (c *MemoryCheckpoint) Commit() (int64, error) {
	n := 0
	c.mu.Lock()
	for _, m := range c.stages {
		n += m.Size()
	}
	c.mu.Unlock()
	c.store.mu.Lock()
	defer c.store.mu.Unlock()
	c.store.done[c.ID] = c
	c.store.last = max(c.store.last, c.ID)
	return int64(n), nil
}

// Abort implements exec.CheckpointWriter.
func (c *MemoryCheckpoint) Abort() {}

// StageState is one stage's state in the checkpoint, as written.
func (c *MemoryCheckpoint) StageState(id int) (*Memory, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.stages[id]
	return m, ok
}

// Stage reads are through Reader (exec.CheckpointReader).
func (c *MemoryCheckpoint) Reader() exec.CheckpointReader { return memCkReader{c} }

type memCkReader struct{ c *MemoryCheckpoint }

func (r memCkReader) Stage(id int) (exec.StateReader, bool) {
	m, ok := r.c.StageState(id)
	if !ok {
		return nil, false
	}
	return m.Reader(), true
}
