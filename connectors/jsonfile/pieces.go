package jsonfile

import (
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
)

// pieceBytes is how big the pieces of a shared split scan are. A piece is
// a byte range of one file (its lines are those that start in it, as for
// a static split). The parts of the scan take pieces from one queue until
// none is left, so a part on a slower core takes fewer and the scan ends
// when the work ends, not when the slowest fixed part does. 4 MB is about
// 5 ms of decoding on one core here: reading the bench's 514 MB bids.json
// in two parts (TestShareBalance, eight alternating rounds), the first
// part to finish waited for the other a median 18-58 ms with static
// ranges, 5-9 ms with 16 MB pieces, 0-1 ms with 4 MB ones, at the same
// CPU time; per piece the cost is an open, a seek and one partial batch.
// Tests lower it; so does the environment variable CLINK_JSON_PIECE_BYTES
// (read when a scan starts).
var pieceBytes int64 = 4 << 20

const (
	// piecesPerPart: a table is cut finer than pieceBytes so that every
	// part gets at least this many pieces, or a 16 MB file at four parts
	// would be four pieces and the static split again.
	piecesPerPart = 4
	// minPieceBytes bounds that finer cut: below it the per-piece costs
	// (open, seek, a partial batch at each end) start to show.
	minPieceBytes = 1 << 20
	// pieceBytesEnv overrides pieceBytes, e.g. for engine tests that want
	// several pieces per part out of small files.
	pieceBytesEnv = "CLINK_JSON_PIECE_BYTES"
)

// piece is the lines that start in bytes [from, to) of one file.
type piece struct {
	path     string
	from, to int64
}

// pieceQueue is the work of one shared split scan: every file's pieces in
// file order. Parts take them with one atomic add each.
type pieceQueue struct {
	pieces []piece
	next   atomic.Int64
	// err is why the queue could not be built (a file that vanished, a bad
	// CLINK_JSON_PIECE_BYTES); every part reports it.
	err error
}

// take returns the next piece, or false when none is left.
func (q *pieceQueue) take() (piece, bool) {
	i := q.next.Add(1) - 1
	if i >= int64(len(q.pieces)) {
		return piece{}, false
	}
	return q.pieces[i], true
}

// newPieceQueue cuts files into pieces for a scan in parts parts.
func newPieceQueue(files []string, parts int) *pieceQueue {
	q := &pieceQueue{}
	most := pieceBytes
	if v := os.Getenv(pieceBytesEnv); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			q.err = fmt.Errorf("filesystem json: %s = '%s': want a positive number of bytes", pieceBytesEnv, v)
			return q
		}
		most = n
	}
	sizes := make([]int64, len(files))
	var total int64
	for i, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			q.err = fmt.Errorf("filesystem json: %w", err)
			return q
		}
		sizes[i] = st.Size()
		total += st.Size()
	}
	size := pieceSize(total, parts, most)
	for i, f := range files {
		n := (sizes[i] + size - 1) / size // an empty file has no piece
		for k := int64(0); k < n; k++ {
			q.pieces = append(q.pieces, piece{path: f, from: sizes[i] * k / n, to: sizes[i] * (k + 1) / n})
		}
	}
	return q
}

// pieceSize is most, or smaller when that would give a part fewer than
// piecesPerPart pieces of total bytes, but not below minPieceBytes (nor
// above most, when most itself is below it).
func pieceSize(total int64, parts int, most int64) int64 {
	size := most
	if fine := total / int64(piecesPerPart*parts); fine < size {
		size = max(fine, min(minPieceBytes, most))
	}
	return max(size, 1)
}
