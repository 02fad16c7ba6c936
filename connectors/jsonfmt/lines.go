package jsonfmt

import (
	"bytes"
	"errors"
)

// NDJSON in place: DecodeLines walks newline-delimited records where they
// were read, ending each at its newline, instead of splitting the lines
// first (the NDJSON file reader's path; Kafka records come one by one
// through Decode).

// DecodeLines decodes the newline-delimited records at the start of data,
// up to limit of them, in place: no line split first, the walk ends each
// record at its newline. It returns the bytes it took, through the newline
// of the last line it read. Lines of only whitespace are no records (not
// counted, not skipped). A bad record's RecordError has its line's Offset
// in data; Result.Kept is nil (no caller aligns per-line metadata).
func (d *Decoder) DecodeLines(data []byte, limit int) (Result, int, error) {
	if len(data) == 0 || limit <= 0 {
		return Result{}, 0, nil
	}
	if d.tryColumnar() {
		res, used, ok, err := d.decodeColumnarLines(data, limit)
		if err != nil {
			return Result{}, 0, err
		}
		if d.columnarDone(res, ok) {
			return res, used, nil
		}
	}
	recs, offs, used := splitLines(data, limit)
	res, err := d.decodeRows(recs)
	if err != nil {
		var re *RecordError
		if errors.As(err, &re) {
			re.Offset = offs[re.Index]
		}
		return Result{}, 0, err
	}
	res.Kept = nil
	d.rowsDone(res)
	return res, used, nil
}

// splitLines cuts up to limit non-blank lines off data for the row decode:
// the lines, their offsets and the bytes they took.
func splitLines(data []byte, limit int) (recs [][]byte, offs []int, used int) {
	for used < len(data) && len(recs) < limit {
		end := len(data)
		if k := bytes.IndexByte(data[used:], '\n'); k >= 0 {
			end = used + k
		}
		if line := data[used:end]; !isBlankLine(line) {
			recs, offs = append(recs, line), append(offs, used)
		}
		used = min(end+1, len(data))
	}
	return recs, offs, used
}

// isBlankLine is the line reader's blank line: nothing but white space
// (Unicode's, as the reader before DecodeLines had it).
func isBlankLine(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

// decodeColumnarLines is decodeColumnar over lines in place (DecodeLines).
func (d *Decoder) decodeColumnarLines(data []byte, limit int) (res Result, used int, ok bool, err error) {
	root := d.root
	// Size the columns for the lines the data likely holds, from the last
	// batch's bytes per record.
	root.begin(min(limit, len(data)/max(d.lineBytes, 1)+16))
	var reasons []string
	n, i := 0, 0
	for n < limit && i < len(data) {
		// The common line: an object, whitespace, its newline.
		if j := skipWS(data, i); j < len(data) && data[j] == '{' {
			if e := d.walk.readObject(data, j, root); e >= 0 {
				if e = skipWS(data, e); e == len(data) || data[e] == '\n' {
					n++
					i = min(e+1, len(data))
					continue
				}
			}
		}
		// Anything else: the line decides, as in decodeColumnar.
		end := len(data)
		if k := bytes.IndexByte(data[i:], '\n'); k >= 0 {
			end = i + k
		}
		line := data[i:end]
		root.truncateChildren(n)
		if !isBlankLine(line) {
			if _, rerr := d.decodeRow(line); rerr == nil {
				root.abandon()
				return Result{}, 0, false, nil
			} else if !d.opts.SkipErrors {
				root.abandon()
				rerr.Offset = i
				return Result{}, 0, false, rerr
			} else {
				reasons = append(reasons, rerr.Reason)
			}
		}
		i = min(end+1, len(data))
	}
	if n > 0 {
		d.lineBytes = i / n
	}
	return d.finishColumnar(n, reasons, nil), i, true, nil
}
