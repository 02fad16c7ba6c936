package ops

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// joinChunk is one input batch held in a streaming join's state, in the
// form it arrived in: an Arrow record (retained) or rows.
type joinChunk struct {
	rec     arrow.RecordBatch
	rows    []exec.Row
	maxT    int64   // latest event time of a row kept from it (bounded joins)
	born    int64   // when it arrived, unix nanoseconds (the state TTL)
	live    int     // entries still in the state
	matched []int32 // per row: current matches on the other side (outer sides)
	dropped bool
	// filling: the batch is still being joined; a retraction in it that
	// empties the chunk must not drop it, as later rows of the batch may
	// still be added (the join drops an empty chunk once it is done).
	filling bool
}

// joinEntry is one row in the state: chunk and row, its key id, and the
// previous entry with the same key (-1 at the end), so a key's rows are a
// list threaded through one slice rather than a slice per key.
type joinEntry struct {
	chunk, row int32 // chunk -1: retracted
	key        int32
	next       int32
}

// joinSide is the state of one input of a StreamJoin.
type joinSide struct {
	chunks  []*joinChunk
	live    []int32 // ids of the chunks not dropped, oldest first
	entries []joinEntry
	heads   []int32 // per key id: the newest entry, -1 none
	// nullHead lists rows with a NULL key (they match nothing, but a
	// changelog input may retract them).
	nullHead int32
	outer    bool // keep per-row match counts

	liveRows  int
	dead      int   // entries retracted or in dropped chunks
	rowChunks int   // live chunks in row form
	expired   int64 // rows dropped because the watermark passed them
}

func (s *joinSide) growHeads(n int) {
	for len(s.heads) < n {
		s.heads = append(s.heads, -1)
	}
}

// addChunk starts holding a batch; rows are added to it with add.
func (s *joinSide) addChunk(rec arrow.RecordBatch, rows []exec.Row, n int) int32 {
	c := &joinChunk{rows: rows, maxT: exec.MinWatermark, filling: true}
	if rec != nil {
		rec.Retain()
		c.rec = rec
	} else {
		s.rowChunks++
	}
	if s.outer {
		c.matched = make([]int32, n)
	}
	id := int32(len(s.chunks))
	s.chunks = append(s.chunks, c)
	s.live = append(s.live, id)
	return id
}

// add links row of chunk under key, with its current match count.
func (s *joinSide) add(chunk, row, key int32, t int64, matched int32) {
	c := s.chunks[chunk]
	c.live++
	c.maxT = max(c.maxT, t)
	if s.outer {
		c.matched[row] = matched
	}
	s.link(joinEntry{chunk: chunk, row: row, key: key})
	s.liveRows++
}

// link puts en at the head of its key's list (or the NULL-key list).
func (s *joinSide) link(en joinEntry) {
	idx := int32(len(s.entries))
	if en.key < 0 {
		en.next, s.nullHead = s.nullHead, idx
	} else {
		s.growHeads(int(en.key) + 1)
		en.next, s.heads[en.key] = s.heads[en.key], idx
	}
	s.entries = append(s.entries, en)
}

// alive reports whether entry e is still in the state.
func (s *joinSide) alive(e int32) bool {
	en := &s.entries[e]
	return en.chunk >= 0 && !s.chunks[en.chunk].dropped
}

// first returns the newest live entry with key g, or -1; next continues.
func (s *joinSide) first(g int32) int32 {
	if g < 0 || int(g) >= len(s.heads) {
		return -1
	}
	return s.skipDead(s.heads[g])
}

func (s *joinSide) next(e int32) int32 { return s.skipDead(s.entries[e].next) }

func (s *joinSide) skipDead(e int32) int32 {
	for e >= 0 && !s.alive(e) {
		e = s.entries[e].next
	}
	return e
}

// value is column c of entry e's row.
func (s *joinSide) value(e int32, c int) any {
	en := s.entries[e]
	ch := s.chunks[en.chunk]
	if ch.rec != nil {
		return exec.Value(ch.rec.Column(c), int(en.row))
	}
	return ch.rows[en.row][c]
}

func (s *joinSide) matched(e int32) *int32 {
	en := s.entries[e]
	return &s.chunks[en.chunk].matched[en.row]
}

// retract removes entry e (a -U or -D of its row).
func (s *joinSide) retract(e int32) {
	en := &s.entries[e]
	c := s.chunks[en.chunk]
	c.live--
	en.chunk = -1
	s.liveRows--
	s.dead++
	if c.live == 0 && !c.filling {
		s.drop(c)
	}
}

// filled ends a chunk's batch: an emptied chunk goes now.
func (s *joinSide) filled(id int32) {
	c := s.chunks[id]
	c.filling = false
	if c.live == 0 {
		s.drop(c)
	}
}

// drop releases a chunk; its entries die with it.
func (s *joinSide) drop(c *joinChunk) {
	if c.dropped {
		return
	}
	c.dropped = true
	s.liveRows -= c.live
	s.dead += c.live
	if c.rec != nil {
		c.rec.Release()
		c.rec = nil
	} else {
		s.rowChunks--
	}
	c.rows, c.matched = nil, nil
}

// expire drops the chunks whose latest event time gone says can match no
// future row of the other side.
func (s *joinSide) expire(gone func(maxT int64) bool) {
	keep := s.live[:0]
	for _, id := range s.live {
		c := s.chunks[id]
		if !c.dropped && gone(c.maxT) {
			s.expired += int64(c.live)
			s.drop(c)
		}
		if !c.dropped {
			keep = append(keep, id)
		}
	}
	s.live = keep
}

// clear drops the whole state (the other input ended: nothing will probe
// it again).
func (s *joinSide) clear() {
	for _, id := range s.live {
		s.drop(s.chunks[id])
	}
	s.live = nil
	s.entries, s.heads, s.chunks, s.nullHead = nil, nil, nil, -1
	s.dead, s.liveRows = 0, 0
}

// rebuild renumbers the side's live chunks and re-keys their live rows
// under a fresh key index (shared by both sides, so the caller rebuilds
// both with the same one), reclaiming retracted and expired entries and
// keys that no longer have rows.
func (s *joinSide) rebuild(keys *keyIndex, keyCols []int) error {
	oldEntries := s.entries
	remap := make(map[int32]int32, len(s.live))
	var chunks []*joinChunk
	for _, id := range s.live {
		remap[id] = int32(len(chunks))
		chunks = append(chunks, s.chunks[id])
	}
	newKey := make([][]int32, len(chunks)) // per chunk, per row
	var ids []int32
	var vals []any
	cols := make([]arrow.Array, len(keyCols))
	for ci, c := range chunks {
		if c.rec != nil {
			for i, k := range keyCols {
				cols[i] = c.rec.Column(k)
			}
			var err error
			ids, err = keys.idsColumnar(cols, int(c.rec.NumRows()), true, ids, nil)
			if err != nil {
				return fmt.Errorf("join state: %w", err)
			}
			newKey[ci] = append([]int32(nil), ids...)
			continue
		}
		newKey[ci] = make([]int32, len(c.rows))
		for r, row := range c.rows {
			vals = vals[:0]
			for _, k := range keyCols {
				vals = append(vals, row[k])
			}
			g, _, err := keys.idRow(vals, true)
			if err != nil {
				return fmt.Errorf("join state: %w", err)
			}
			newKey[ci][r] = g
		}
	}
	s.chunks, s.entries, s.heads, s.nullHead = chunks, nil, nil, -1
	s.live = s.live[:0]
	for i := range chunks {
		s.live = append(s.live, int32(i))
	}
	s.dead = 0
	for _, en := range oldEntries {
		if en.chunk < 0 {
			continue
		}
		nc, ok := remap[en.chunk]
		if !ok || chunks[nc].dropped {
			continue
		}
		s.link(joinEntry{chunk: nc, row: en.row, key: newKey[nc][en.row]})
	}
	return nil
}

func (s *joinSide) release() {
	for _, id := range s.live {
		c := s.chunks[id]
		if c.rec != nil && !c.dropped {
			c.rec.Release()
			c.rec = nil
		}
	}
	s.live, s.chunks = nil, nil
}
