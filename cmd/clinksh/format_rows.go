package main

import (
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/mattn/go-runewidth"
)

// defaultMaxRows is the table format's row cap (\set maxrows), about a
// screenful, as in DuckDB's CLI.
const defaultMaxRows = 40

// keptRows holds the rows a capped table shows: the first half of the cap
// and a ring of the last half, so memory stays flat however long the
// result is. max 0 keeps every row.
type keptRows struct {
	max  int
	head [][]string
	tail [][]string // a ring once full; next is its oldest row
	next int
}

func (k *keptRows) headCap() int { return (k.max + 1) / 2 }
func (k *keptRows) tailCap() int { return k.max - k.headCap() }

// needed reports whether row i can be shown, given that end rows have
// arrived so far: it is in the head, or among the last tailCap of them
// (a row earlier in the same batch would be pushed out of the ring at once).
func (k *keptRows) needed(i, end int64) bool {
	return k.max <= 0 || i < int64(k.headCap()) || i >= end-int64(k.tailCap())
}

// add keeps row i (rows are added in order).
func (k *keptRows) add(i int64, row []string) {
	switch {
	case k.max <= 0 || i < int64(k.headCap()):
		k.head = append(k.head, row)
	case k.tailCap() == 0:
	case len(k.tail) < k.tailCap():
		k.tail = append(k.tail, row)
	default:
		k.tail[k.next] = row
		k.next = (k.next + 1) % len(k.tail)
	}
}

// rows returns the kept rows in result order: the head, then the tail.
func (k *keptRows) rows() (head, tail [][]string) {
	tail = append(append([][]string(nil), k.tail[k.next:]...), k.tail[:k.next]...)
	return k.head, tail
}

// hidden is how many of n rows are not kept.
func (k *keptRows) hidden(n int64) int64 {
	return n - int64(len(k.head)+len(k.tail))
}

// appendRecord appends row number no in the expanded layout of \x, one
// line per column under a record header, as psql prints it:
//
//	-[ RECORD 1 ]-----
//	id   | 1
//	name | widget
func appendRecord(out []byte, schema *arrow.Schema, no int64, row []string) []byte {
	nameW, valW := 0, 0
	for i, f := range schema.Fields() {
		nameW = max(nameW, runewidth.StringWidth(f.Name))
		if strings.ContainsAny(row[i], "\n\r\t") {
			row[i] = controlToSpace.Replace(row[i])
		}
		valW = max(valW, displayWidth(row[i]))
	}
	head := len(out)
	out = append(out, "-[ RECORD "...)
	out = strconv.AppendInt(out, no, 10)
	out = append(out, " ]"...)
	for w := len(out) - head; w < nameW+3+valW; w++ {
		out = append(out, '-')
	}
	out = append(out, '\n')
	for i, f := range schema.Fields() {
		out = append(out, f.Name...)
		out = appendSpaces(out, nameW-runewidth.StringWidth(f.Name))
		out = append(out, " | "...)
		out = append(out, row[i]...)
		out = append(out, '\n')
	}
	return out
}
