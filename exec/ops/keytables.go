package ops

import (
	"hash/maphash"
	"math/bits"
	"unsafe"
)

// pairTable maps 128-bit keys (two packed words, see keyLayout) to dense
// ids: int64Table's open addressing with linear probing, over key pairs.
type pairTable struct {
	keys  []uint64 // slot i holds keys[2i], keys[2i+1]
	ids   []int32  // id+1; 0: empty slot
	shift uint
	n     int
}

func newPairTable() *pairTable {
	t := &pairTable{}
	t.alloc(1 << 10)
	return t
}

func (t *pairTable) alloc(size int) {
	t.keys = make([]uint64, 2*size)
	t.ids = make([]int32, size)
	t.shift = uint(64 - log2(size))
}

// slot is the pair's home slot: a 128-bit multiply folded (wyhash's mix),
// so both words reach the top bits the slot is taken from.
func (t *pairTable) slot(a, b uint64) int {
	hi, lo := bits.Mul64(a^0xa0761d6478bd642f, b^0xe7037ed1a0b428db)
	return int((hi ^ lo) >> t.shift)
}

func (t *pairTable) findOrInsert(a, b uint64, next int32) (int32, bool) {
	if 2*(t.n+1) > len(t.ids) {
		t.grow()
	}
	mask := len(t.ids) - 1
	for i := t.slot(a, b); ; i = (i + 1) & mask {
		id := t.ids[i]
		if id == 0 {
			t.keys[2*i], t.keys[2*i+1], t.ids[i] = a, b, next+1
			t.n++
			return next, true
		}
		if t.keys[2*i] == a && t.keys[2*i+1] == b {
			return id - 1, false
		}
	}
}

func (t *pairTable) get(a, b uint64) (int32, bool) {
	mask := len(t.ids) - 1
	for i := t.slot(a, b); ; i = (i + 1) & mask {
		id := t.ids[i]
		if id == 0 {
			return -1, false
		}
		if t.keys[2*i] == a && t.keys[2*i+1] == b {
			return id - 1, true
		}
	}
}

func (t *pairTable) grow() {
	keys, ids := t.keys, t.ids
	t.alloc(2 * len(ids))
	mask := len(t.ids) - 1
	for j, id := range ids {
		if id == 0 {
			continue
		}
		a, b := keys[2*j], keys[2*j+1]
		i := t.slot(a, b)
		for t.ids[i] != 0 {
			i = (i + 1) & mask
		}
		t.keys[2*i], t.keys[2*i+1], t.ids[i] = a, b, id
	}
}

// bytesTable maps byte-string keys to ids. The keys live end to end in
// arena blocks (no allocation or string header per key, and no copy of the
// keys as the table grows) and are found through open addressing over
// slots that hold 32 bits of the key's hash beside its entry number, so a
// probe compares bytes only when those bits agree, and an entry (where its
// key is, its id) is one 16-byte load. Hashing is maphash's (the
// runtime's AES-based hash where the CPU has it).
type bytesTable struct {
	slots  []uint64 // hash tag << 32 | entry+1; 0: empty
	shift  uint
	ents   []bytesEnt
	hashes []uint64 // by entry: the full hash, to re-slot on growth
	blocks [][]byte // the arena; only the last has room
	seed   maphash.Seed
}

type bytesEnt struct {
	block, off uint32
	len, id    int32
}

// bytesBlock is the size of an arena block; a longer key gets a block of
// its own.
const bytesBlock = 256 << 10

func newBytesTable() *bytesTable {
	t := &bytesTable{seed: maphash.MakeSeed()}
	t.alloc(1 << 8)
	return t
}

func (t *bytesTable) alloc(size int) {
	t.slots = make([]uint64, size)
	t.shift = uint(64 - log2(size))
}

func (t *bytesTable) hash(k string) uint64 { return maphash.String(t.seed, k) }

// find returns the id of key k of hash h, or -1.
func (t *bytesTable) find(k string, h uint64) int32 {
	mask := len(t.slots) - 1
	tag := h << 32
	for i := int(h >> t.shift); ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return -1
		}
		if s&^0xffffffff != tag {
			continue
		}
		e := &t.ents[uint32(s)-1]
		if int(e.len) == len(k) && (len(k) == 0 || unsafe.String(&t.blocks[e.block][e.off], len(k)) == k) {
			return e.id
		}
	}
}

// insert adds k (copied: it may alias Arrow memory), which is not in the
// table, with id.
func (t *bytesTable) insert(k string, h uint64, id int32) {
	if 2*(len(t.ents)+1) > len(t.slots) {
		t.grow()
	}
	last := len(t.blocks) - 1
	if last < 0 || len(k) > cap(t.blocks[last])-len(t.blocks[last]) {
		t.blocks = append(t.blocks, make([]byte, 0, max(bytesBlock, len(k))))
		last++
	}
	b := t.blocks[last]
	e := len(t.ents)
	t.ents = append(t.ents, bytesEnt{block: uint32(last), off: uint32(len(b)), len: int32(len(k)), id: id})
	t.blocks[last] = append(b, k...)
	t.hashes = append(t.hashes, h)
	t.place(h, e)
}
func (t *bytesTable) place(h uint64, e int) {
	mask := len(t.slots) - 1
	i := int(h >> t.shift)
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = h<<32 | uint64(e+1)
}

func (t *bytesTable) grow() {
	t.alloc(2 * len(t.slots))
	for e, h := range t.hashes {
		t.place(h, e)
	}
}
