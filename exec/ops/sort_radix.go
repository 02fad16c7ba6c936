package ops

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// Entries are what a full sort sorts: per row its normalised key (width
// bytes) followed by its row number (4 bytes, little-endian), in one flat
// buffer. Moving a row's key with its number keeps every comparison a
// memory compare of neighbouring bytes.
const entryIdx = 4

// radixSort sorts n entries of buf (stride bytes each, the key the first
// width) by key, stably: equal keys keep their row order, which makes the
// result the one a stable comparison sort gives. It is an MSD radix sort:
// one counting pass per key byte over a range, skipping a byte every entry
// of the range shares, with insertion sort for small ranges. ties, when
// set, is called with each run of two or more entries whose keys are
// equal, in row order, to reorder them (string keys longer than their
// prefix).
func radixSort(buf []byte, n, stride, width int, ties func(run []byte)) {
	if n < 2 {
		return
	}
	s := radixSorter{buf: buf[:n*stride], tmp: make([]byte, n*stride), stride: stride, width: width,
		ties: ties, entry: make([]byte, stride)}
	s.sort(0, n, 0)
}

type radixSorter struct {
	buf, tmp      []byte
	stride, width int
	ties          func(run []byte)
	entry         []byte // insertion sort's held entry
}

// insertionMax is the largest range insertion sort takes: below it, a
// counting pass's 256 buckets cost more than the comparisons.
const insertionMax = 24

func (s *radixSorter) sort(lo, hi, d int) {
	st := s.stride
	for {
		n := hi - lo
		if n < 2 {
			return
		}
		if d == s.width {
			if s.ties != nil {
				s.ties(s.buf[lo*st : hi*st])
			}
			return
		}
		if n <= insertionMax {
			s.insertion(lo, hi, d)
			return
		}
		var count [256]int
		for o := lo*st + d; o < hi*st; o += st {
			count[s.buf[o]]++
		}
		if count[s.buf[lo*st+d]] == n {
			d++ // every entry has this byte: nothing to move
			continue
		}
		var next [256]int
		sum := lo
		for b, c := range count {
			next[b] = sum
			sum += c
		}
		start := next
		for o := lo * st; o < hi*st; o += st {
			e := s.buf[o : o+st]
			b := e[d]
			copy(s.tmp[next[b]*st:], e)
			next[b]++
		}
		copy(s.buf[lo*st:hi*st], s.tmp[lo*st:hi*st])
		for b, c := range count {
			if c > 1 {
				s.sort(start[b], start[b]+c, d+1)
			}
		}
		return
	}
}

// insertion sorts [lo, hi) by key bytes d.., stably, then hands runs of
// equal keys to ties.
func (s *radixSorter) insertion(lo, hi, d int) {
	st, w, buf := s.stride, s.width, s.buf
	for i := lo + 1; i < hi; i++ {
		key := buf[i*st+d : i*st+w]
		j := i
		for j > lo && bytes.Compare(buf[(j-1)*st+d:(j-1)*st+w], key) > 0 {
			j--
		}
		if j < i {
			copy(s.entry, buf[i*st:(i+1)*st])
			copy(buf[(j+1)*st:(i+1)*st], buf[j*st:i*st])
			copy(buf[j*st:], s.entry)
		}
	}
	if s.ties == nil {
		return
	}
	for i := lo; i < hi; {
		j := i + 1
		for j < hi && bytes.Equal(buf[i*st+d:i*st+w], buf[j*st+d:j*st+w]) {
			j++
		}
		if j-i > 1 {
			s.ties(buf[i*st : j*st])
		}
		i = j
	}
}

// entryRow is the row number of the entry at e.
func entryRow(e []byte, stride int) int32 {
	return int32(binary.LittleEndian.Uint32(e[stride-entryIdx:]))
}

func setEntryRow(e []byte, stride int, row int32) {
	binary.LittleEndian.PutUint32(e[stride-entryIdx:], uint32(row))
}

// breakTies returns the ties callback of a sort whose string keys may be
// longer than their prefix: it orders a run of equal keys by the full
// values (tieCompare over str), then by row number. A run whose values are
// all equal, the common case, is left as it came (row order).
func breakTies(nk *normKeys, stride int, str func(row int32, col int) []byte) func(run []byte) {
	var rows []int32
	return func(run []byte) {
		rows = rows[:0]
		for o := 0; o < len(run); o += stride {
			rows = append(rows, entryRow(run[o:], stride))
		}
		same := true
		for _, r := range rows[1:] {
			if tieCompare(nk, rows[0], r, str) != 0 {
				same = false
				break
			}
		}
		if same {
			return
		}
		sortRowsBy(rows, func(a, b int32) int { return tieCompare(nk, a, b, str) })
		// The keys of the run are equal: only the row numbers move.
		for k, o := 0, 0; o < len(run); k, o = k+1, o+stride {
			setEntryRow(run[o:], stride, rows[k])
		}
	}
}

// sortRowsBy sorts distinct row numbers by cmp, ties in row order.
func sortRowsBy(rows []int32, cmp func(a, b int32) int) {
	slices.SortFunc(rows, func(a, b int32) int {
		if c := cmp(a, b); c != 0 {
			return c
		}
		return cmpOrdered(a, b)
	})
}
