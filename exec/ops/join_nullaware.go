package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// nullAwareUnknown settles, for a null-aware hash join (IN, NOT IN), the
// probe rows that found no match: such a row's mark is NULL rather than
// FALSE when some build row whose residual is TRUE compares NULL on the
// keys (no key pair unequal, some pair with a NULL). Those build rows are
// the ones with a NULL key (build.nullRows) when the probe row's keys are
// all set, and any build row when one of them is NULL, in either case
// only those of its group when there are null-safe keys (nullGroups);
// with several keys the others must agree.
func (j *batchJoin) nullAwareUnknown(ctx context.Context, pb *probeBatch, hits []int32, unknown []bool) error {
	ng, err := j.nullGroups()
	if err != nil {
		return err
	}
	var groups []int32 // the probe rows' groups
	if ng != nil {
		var cols []arrow.Array
		if pb.rec != nil {
			cols = recordColumns(pb.rec)
		}
		if groups, err = ng.ids(cols, pb.rows, pb.n, j.leftKeys, false); err != nil {
			return err
		}
	}
	// The keys a candidate must still be compared on: within a group the
	// null-safe keys are equal, and one plain key may be NULL or anything.
	multi := len(j.leftKeys) > 1
	if ng != nil {
		multi = len(j.plainKeys) > 1
	}
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
		var base []int32
		switch {
		case ng != nil && lnull:
			base = ng.all.of(groups[i])
		case ng != nil:
			base = ng.nulls.of(groups[i])
		case lnull:
			base = j.build.allRows()
		default:
			base = j.build.nullRows
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

// nullGroups indexes the build rows of a null-aware join by their
// null-safe keys (a decorrelated subquery's domain). A probe row can only
// compare NULL with a build row of its own group (the others differ on a
// null-safe key: FALSE), so its search for one looks at that group's rows
// rather than at every build row.
type nullGroups struct {
	keys  *keyIndex
	safe  []int // the null-safe keys' positions in the join's keys
	all   csr   // the build rows by group
	nulls csr   // build.nullRows by group
}

// csr lists rows by group: group g's are rows[off[g]:off[g+1]].
type csr struct{ off, rows []int32 }

func (c csr) of(g int32) []int32 {
	if g < 0 {
		return nil
	}
	return c.rows[c.off[g]:c.off[g+1]]
}

// nullGroups builds the build side's groups, once (nil without null-safe
// keys).
func (j *batchJoin) nullGroups() (*nullGroups, error) {
	bs := j.build
	if bs.groups != nil || len(j.plainKeys) == len(j.leftKeys) {
		return bs.groups, nil
	}
	ng := &nullGroups{}
	var types []arrow.DataType
	for k := range j.leftKeys {
		if j.isNullSafe(k) {
			ng.safe = append(ng.safe, k)
			types = append(types, j.out.Field(j.leftKeys[k]).Type)
		}
	}
	ng.keys = newKeyIndex(chooseKeyKind(types), true)
	bs.groups = ng // released with the build side from here on
	gids, err := ng.ids(bs.cols, bs.rows, bs.n, j.rightKeys, true)
	if err != nil {
		return nil, err
	}
	ng.all.off, ng.all.rows = groupRows(gids, nil, ng.keys.len())
	nullRows := bs.nullRows
	if nullRows == nil {
		nullRows = []int32{} // none, not groupRows' nil (every row)
	}
	ng.nulls.off, ng.nulls.rows = groupRows(gids, nullRows, ng.keys.len())
	return ng, nil
}

// ids are the group ids of n rows given as columns (when cols is not
// nil) or rows, whose join keys are at keyCols.
func (ng *nullGroups) ids(cols []arrow.Array, rows []exec.Row, n int, keyCols []int, insert bool) ([]int32, error) {
	if cols != nil {
		kc := make([]arrow.Array, len(ng.safe))
		for i, k := range ng.safe {
			kc[i] = cols[keyCols[k]]
		}
		ids, err := ng.keys.idsColumnar(kc, n, insert, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("join: %w", err)
		}
		return ids, nil
	}
	ids := make([]int32, n)
	vals := make([]any, len(ng.safe))
	for r, row := range rows {
		for i, k := range ng.safe {
			vals[i] = row[keyCols[k]]
		}
		id, _, err := ng.keys.idRow(vals, insert)
		if err != nil {
			return nil, fmt.Errorf("join row %d: %w", r, err)
		}
		ids[r] = id
	}
	return ids, nil
}
