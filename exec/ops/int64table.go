package ops

// int64Table maps BIGINT keys to dense ids: open addressing with linear
// probing over flat key and id slices. It replaced a Go map for the single
// BIGINT key (the common GROUP BY and join key): the map's per-lookup
// hashing and group probing dominated high-cardinality aggregation
// (BenchmarkHashAggregateInt64Key1M), where this table's probe is a
// multiply, a shift and usually one cache line.
//
// Tried and measured: (key, id) slots in one slice, so a probe touches one
// line instead of two, made GROUP BY auction (130k groups) slower (77-82 ms
// against 67-74 ms, alternating runs) and the bids-auctions join no faster:
// 16-byte slots are a third more memory than 8 + 4.
//
// A slot holds id+1, so 0 is an empty slot and a new table is ready as
// make returns it: filling the ids with -1 was a second pass over every
// table a GROUP BY grows through (8% of a high-cardinality GROUP BY at
// two threads, where partial and final aggregates each grow one).
type int64Table struct {
	keys  []int64
	ids   []int32 // id+1; 0: empty slot
	shift uint    // 64 - log2(len(keys))
	n     int
}

func newInt64Table() *int64Table {
	t := &int64Table{}
	t.alloc(1 << 10)
	return t
}

func (t *int64Table) alloc(size int) {
	t.keys = make([]int64, size)
	t.ids = make([]int32, size)
	t.shift = uint(64 - log2(size))
}

func log2(n int) int {
	l := 0
	for 1<<l < n {
		l++
	}
	return l
}

// slot is the key's home slot (Fibonacci hashing).
func (t *int64Table) slot(k int64) int {
	return int((uint64(k) * 0x9E3779B97F4A7C15) >> t.shift)
}

// get returns the key's id.
func (t *int64Table) get(k int64) (int32, bool) {
	mask := len(t.keys) - 1
	for i := t.slot(k); ; i = (i + 1) & mask {
		id := t.ids[i]
		if id == 0 {
			return -1, false
		}
		if t.keys[i] == k {
			return id - 1, true
		}
	}
}

// findOrInsert returns the key's id, adding it with id next when it is
// missing (inserted reports that): one probe where get then put take two.
func (t *int64Table) findOrInsert(k int64, next int32) (id int32, inserted bool) {
	if 2*(t.n+1) > len(t.keys) {
		t.grow()
	}
	mask := len(t.keys) - 1
	for i := t.slot(k); ; i = (i + 1) & mask {
		id := t.ids[i]
		if id == 0 {
			t.keys[i], t.ids[i] = k, next+1
			t.n++
			return next, true
		}
		if t.keys[i] == k {
			return id - 1, false
		}
	}
}

// put adds a key that is not in the table.
func (t *int64Table) put(k int64, id int32) {
	if 2*(t.n+1) > len(t.keys) { // keep the load under one half
		t.grow()
	}
	mask := len(t.keys) - 1
	i := t.slot(k)
	for t.ids[i] != 0 {
		i = (i + 1) & mask
	}
	t.keys[i], t.ids[i] = k, id+1
	t.n++
}

func (t *int64Table) grow() {
	keys, ids := t.keys, t.ids
	t.alloc(2 * len(keys))
	mask := len(t.keys) - 1
	for j, id := range ids {
		if id == 0 {
			continue
		}
		i := t.slot(keys[j])
		for t.ids[i] != 0 {
			i = (i + 1) & mask
		}
		t.keys[i], t.ids[i] = keys[j], id
	}
}
