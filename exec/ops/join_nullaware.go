package ops

import (
	"context"
)

// nullAwareUnknown settles, for a null-aware hash join (IN, NOT IN), the
// probe rows that found no match: such a row's mark is NULL rather than
// FALSE when some build row whose residual is TRUE compares NULL on the
// keys (no key pair unequal, some pair with a NULL). Those build rows are
// the ones with a NULL key (build.nullRows) when the probe row's keys are
// all set, and any build row when one of them is NULL; with several keys
// the others must agree.
func (j *batchJoin) nullAwareUnknown(ctx context.Context, pb *probeBatch, hits []int32, unknown []bool) error {
	multi := len(j.leftKeys) > 1
	var enc [][]string
	if multi {
		enc = j.build.keyEncodings(j.rightKeys)
	}
	var lenc []string
	var buf []byte
	var scratch []int32
	cands := func(i int) []int32 {
		lnull := false
		for _, k := range j.plainKeys {
			if pb.isNull(j.leftKeys[k], i) {
				lnull = true
				break
			}
		}
		base := j.build.nullRows
		if lnull {
			base = j.build.allRows()
		}
		if !multi || len(base) == 0 {
			return base
		}
		lenc = lenc[:0]
		for _, c := range j.leftKeys {
			buf = pb.appendKey(buf[:0], c, i)
			lenc = append(lenc, string(buf))
		}
		scratch = scratch[:0]
		for _, r := range base {
			if j.keysMayEqual(lenc, enc, r) {
				scratch = append(scratch, r)
				if j.residual == nil {
					break // one settles it
				}
			}
		}
		return scratch
	}
	want := func(i int) bool { return hits[i] == 0 && !unknown[i] }
	if j.residual == nil {
		for i := 0; i < pb.n; i++ {
			if want(i) && len(cands(i)) > 0 {
				unknown[i] = true
			}
		}
		return nil
	}
	return j.residualExists(ctx, pb, want, cands, false, func(l int32, _ bool) { unknown[l] = true })
}

var nullKeyEnc = string([]byte{tagNull})

// keysMayEqual reports whether no key of the probe row (encoded lenc)
// and build row r is unequal: a null-safe key must be the same (NULL
// included), any other may be NULL on either side.
func (j *batchJoin) keysMayEqual(lenc []string, enc [][]string, r int32) bool {
	for k, l := range lenc {
		rv := enc[k][r]
		if j.isNullSafe(k) {
			if l != rv {
				return false
			}
			continue
		}
		if l != nullKeyEnc && rv != nullKeyEnc && l != rv {
			return false
		}
	}
	return true
}

// keyEncodings encodes every build row's key columns (keys.go's
// encoding, so equal values encode equally), once.
func (bs *buildSide) keyEncodings(cols []int) [][]string {
	if bs.keyEnc != nil {
		return bs.keyEnc
	}
	bs.keyEnc = make([][]string, len(cols))
	var buf []byte
	for k, c := range cols {
		enc := make([]string, bs.n)
		for r := range enc {
			if bs.cols != nil {
				buf, _ = appendKeyArr(buf[:0], bs.cols[c], r)
			} else {
				buf = appendKeyValue(buf[:0], bs.rows[r][c])
			}
			enc[r] = string(buf)
		}
		bs.keyEnc[k] = enc
	}
	return bs.keyEnc
}

// isNull reports whether column c of row i is NULL.
func (pb *probeBatch) isNull(c, i int) bool {
	if pb.rec != nil {
		return pb.rec.Column(c).IsNull(i)
	}
	return pb.rows[i][c] == nil
}

// appendKey appends the key encoding of column c of row i.
func (pb *probeBatch) appendKey(buf []byte, c, i int) []byte {
	if pb.rec != nil {
		buf, _ = appendKeyArr(buf, pb.rec.Column(c), i)
		return buf
	}
	return appendKeyValue(buf, pb.rows[i][c])
}
