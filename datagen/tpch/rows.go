package tpch

import (
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/clink-sql/clink/datagen"
)

// Random streams: each is keyed by the row's own index, so any chunk can
// be generated alone.
const (
	streamTextPool = iota + 1
	streamPart
	streamPartSupp
	streamSupplier
	streamComplaints
	streamCustomer
	streamOrder
	streamLines
	streamLineText
	streamNation
	streamRegion
)

// Dates (clause 4.2.2.12), as days since 1970-01-01.
var (
	startDate   = epochDays(1992, 1, 1)
	currentDate = epochDays(1995, 6, 17)
	endDate     = epochDays(1998, 12, 31)
	// An order is placed at most 151 days before the end, so that its
	// lines (shipped up to 121 days later, received up to 30 days after
	// that) fall before it.
	lastOrderDate = endDate - 151
)

func epochDays(y int, m time.Month, d int) int32 {
	return int32(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// retailPrice is P_RETAILPRICE in cents (clause 4.2.3).
func retailPrice(partkey int64) int64 {
	return 90000 + (partkey/10)%20001 + 100*(partkey%1000)
}

// partSupplier is the i-th (0..3) supplier of a part (clause 4.2.3,
// PS_SUPPKEY): the four are distinct and spread over the suppliers.
func partSupplier(partkey, i, suppliers int64) int64 {
	return (partkey+i*(suppliers/4+(partkey-1)/suppliers))%suppliers + 1
}

// orderKey makes the sparse O_ORDERKEY of the index-th order (1-based):
// only the first 8 keys of every 32 are used (clause 4.2.3).
func orderKey(index int64) int64 { return (index>>3)<<5 | index&7 }

// appendPadded appends n in decimal, zero-padded to width digits.
func appendPadded(b []byte, n int64, width int) []byte {
	var digits [20]byte
	s := strconv.AppendInt(digits[:0], n, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// appendPhone appends a phone number of a nation (clause 4.2.2.9):
// country code nation+10, then three random local parts.
func appendPhone(b []byte, r *datagen.Rand, nation int64) []byte {
	b = strconv.AppendInt(b, nation+10, 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, r.Range(100, 999), 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, r.Range(100, 999), 10)
	b = append(b, '-')
	return strconv.AppendInt(b, r.Range(1000, 9999), 10)
}

func money(cents int64) decimal128.Num { return decimal128.FromI64(cents) }

// cols gives typed access to a record builder's fields.
type cols struct{ b *array.RecordBuilder }

func (c cols) i64(i int) *array.Int64Builder      { return c.b.Field(i).(*array.Int64Builder) }
func (c cols) i32(i int) *array.Int32Builder      { return c.b.Field(i).(*array.Int32Builder) }
func (c cols) str(i int) *array.StringBuilder     { return c.b.Field(i).(*array.StringBuilder) }
func (c cols) dec(i int) *array.Decimal128Builder { return c.b.Field(i).(*array.Decimal128Builder) }
func (c cols) date(i int) *array.Date32Builder    { return c.b.Field(i).(*array.Date32Builder) }

func (g *generator) fillPart() datagen.Fill {
	return func(b *array.RecordBuilder, from, to int64) error {
		c := cols{b}
		key, name, mfgr, brand, typ := c.i64(0), c.str(1), c.str(2), c.str(3), c.str(4)
		size, container, price, comment := c.i32(5), c.str(6), c.dec(7), c.str(8)
		var buf []byte
		for pk := from; pk < to; pk++ {
			r := datagen.NewRand(g.seed, streamPart, uint64(pk))
			key.Append(pk)
			// Five distinct colours (clause 4.2.3: P_NAME).
			var picked [5]int
			buf = buf[:0]
			for i := 0; i < 5; i++ {
			again:
				k := int(r.Intn(int64(len(colors))))
				for _, p := range picked[:i] {
					if p == k {
						goto again
					}
				}
				picked[i] = k
				if i > 0 {
					buf = append(buf, ' ')
				}
				buf = append(buf, colors[k]...)
			}
			name.BinaryBuilder.Append(buf)
			m := r.Range(1, 5)
			buf = append(buf[:0], "Manufacturer#"...)
			mfgr.BinaryBuilder.Append(strconv.AppendInt(buf, m, 10))
			buf = append(buf[:0], "Brand#"...)
			brand.BinaryBuilder.Append(strconv.AppendInt(buf, m*10+r.Range(1, 5), 10))
			buf = append(buf[:0], typeS1[r.Intn(6)]...)
			buf = append(append(buf, ' '), typeS2[r.Intn(5)]...)
			buf = append(append(buf, ' '), typeS3[r.Intn(5)]...)
			typ.BinaryBuilder.Append(buf)
			size.Append(int32(r.Range(1, 50)))
			buf = append(buf[:0], containerS1[r.Intn(5)]...)
			buf = append(append(buf, ' '), containerS2[r.Intn(8)]...)
			container.BinaryBuilder.Append(buf)
			price.Append(money(retailPrice(pk)))
			comment.AppendString(g.text.comment(&r, 5, 22))
		}
		return nil
	}
}

func (g *generator) fillPartSupp() datagen.Fill {
	return func(b *array.RecordBuilder, from, to int64) error {
		c := cols{b}
		part, supp, qty, cost, comment := c.i64(0), c.i64(1), c.i64(2), c.dec(3), c.str(4)
		for pk := from; pk < to; pk++ {
			r := datagen.NewRand(g.seed, streamPartSupp, uint64(pk))
			for i := int64(0); i < 4; i++ {
				part.Append(pk)
				supp.Append(partSupplier(pk, i, g.s.suppliers))
				qty.Append(r.Range(1, 9999))
				cost.Append(money(r.Range(100, 100000)))
				comment.AppendString(g.text.comment(&r, 49, 198))
			}
		}
		return nil
	}
}

// The Better Business Bureau comments of suppliers (clause 4.2.3,
// S_COMMENT): in every block of 2,000 suppliers one says
// "Customer ... Complaints" and another "Customer ... Recommends", so
// SF * 5 of each (Q16 excludes the complained-of).
const complaintBlock = 2000

// complaint says whether supplier key carries a BBB comment: 'C'
// (complaints), 'R' (recommends) or 0.
func (g *generator) complaint(key int64) byte {
	block := (key - 1) / complaintBlock
	r := datagen.NewRand(g.seed, streamComplaints, uint64(block))
	c := r.Intn(complaintBlock)
	rec := r.Intn(complaintBlock - 1)
	if rec >= c {
		rec++
	}
	switch (key - 1) % complaintBlock {
	case c:
		return 'C'
	case rec:
		return 'R'
	}
	return 0
}

// appendBBB overwrites part of comment with "Customer <junk>Complaints" or
// "...Recommends" at a random place.
func appendBBB(b []byte, comment string, r *datagen.Rand, kind byte) []byte {
	const base, complaints, recommends = "Customer ", "Complaints", "Recommends"
	b = append(b, comment...)
	n := len(base) + len(complaints)
	noise := int(r.Intn(int64(len(comment) - n + 1)))
	off := int(r.Intn(int64(len(comment) - n - noise + 1)))
	copy(b[off:], base)
	tail := complaints
	if kind == 'R' {
		tail = recommends
	}
	copy(b[off+len(base)+noise:], tail)
	return b
}

// party appends the six columns suppliers and customers share (clause
// 4.2.3 gives them the same rules): key, "<tag>" and the key in 9 digits,
// a v-string address, a random nation, its phone, a balance in
// [-999.99, 9999.99].
func (c cols) party(r *datagen.Rand, key int64, tag string, buf []byte) []byte {
	c.i64(0).Append(key)
	buf = appendPadded(append(buf[:0], tag...), key, 9)
	c.str(1).BinaryBuilder.Append(buf)
	c.str(2).BinaryBuilder.Append(appendVString(buf[:0], r, 10, 40))
	n := r.Intn(int64(len(nations)))
	c.i32(3).Append(int32(n))
	c.str(4).BinaryBuilder.Append(appendPhone(buf[:0], r, n))
	c.dec(5).Append(money(r.Range(-99999, 999999)))
	return buf
}

func (g *generator) fillSupplier() datagen.Fill {
	return func(b *array.RecordBuilder, from, to int64) error {
		c := cols{b}
		comment := c.str(6)
		var buf []byte
		for sk := from; sk < to; sk++ {
			r := datagen.NewRand(g.seed, streamSupplier, uint64(sk))
			buf = c.party(&r, sk, "Supplier#", buf)
			text := g.text.comment(&r, 25, 100)
			if kind := g.complaint(sk); kind != 0 {
				comment.BinaryBuilder.Append(appendBBB(buf[:0], text, &r, kind))
			} else {
				comment.AppendString(text)
			}
		}
		return nil
	}
}

func (g *generator) fillCustomer() datagen.Fill {
	return func(b *array.RecordBuilder, from, to int64) error {
		c := cols{b}
		seg, comment := c.str(6), c.str(7)
		var buf []byte
		for ck := from; ck < to; ck++ {
			r := datagen.NewRand(g.seed, streamCustomer, uint64(ck))
			buf = c.party(&r, ck, "Customer#", buf)
			seg.AppendString(segments[r.Intn(int64(len(segments)))])
			comment.AppendString(g.text.comment(&r, 29, 116))
		}
		return nil
	}
}

// line is the numeric part of a lineitem: what O_TOTALPRICE and
// O_ORDERSTATUS are derived from.
type line struct {
	partkey, suppkey        int64
	quantity, discount, tax int64 // quantity in units; discount and tax in hundredths
	price                   int64 // L_EXTENDEDPRICE in cents
	ship, commit, receipt   int32
	returnFlag, lineStatus  byte
}

// orderCore is what an order and its lines share: the order date and the
// lines. Both the orders and the lineitem files derive it from the same
// stream, so they agree without being generated together.
type orderCore struct {
	date  int32
	n     int
	lines [7]line
}

func (g *generator) orderCore(index int64, o *orderCore) {
	r := datagen.NewRand(g.seed, streamLines, uint64(index))
	o.date = startDate + int32(r.Intn(int64(lastOrderDate-startDate+1)))
	o.n = int(r.Range(1, 7))
	for i := 0; i < o.n; i++ {
		l := &o.lines[i]
		l.partkey = r.Range(1, g.s.parts)
		l.suppkey = partSupplier(l.partkey, r.Intn(4), g.s.suppliers)
		l.quantity = r.Range(1, 50)
		l.discount = r.Range(0, 10)
		l.tax = r.Range(0, 8)
		l.price = l.quantity * retailPrice(l.partkey)
		l.ship = o.date + int32(r.Range(1, 121))
		l.commit = o.date + int32(r.Range(30, 90))
		l.receipt = l.ship + int32(r.Range(1, 30))
		// Returned or accepted once received by the current date, else
		// not yet (N); shipped lines are final (F), the others open (O).
		flag := byte('R')
		if r.Intn(2) == 1 {
			flag = 'A'
		}
		if l.receipt > currentDate {
			flag = 'N'
		}
		l.returnFlag = flag
		l.lineStatus = 'O'
		if l.ship <= currentDate {
			l.lineStatus = 'F'
		}
	}
}

// totals derives O_TOTALPRICE (cents) and O_ORDERSTATUS from the lines:
// the sum of extended price x (1 - discount) x (1 + tax), each factor's
// product truncated to cents as dbgen does; F when every line is F, O
// when every line is O, else P.
func (o *orderCore) totals() (int64, byte) {
	var total int64
	var shipped int
	for _, l := range o.lines[:o.n] {
		total += l.price * (100 - l.discount) / 100 * (100 + l.tax) / 100
		if l.lineStatus == 'F' {
			shipped++
		}
	}
	switch shipped {
	case o.n:
		return total, 'F'
	case 0:
		return total, 'O'
	}
	return total, 'P'
}

var oneChar = [256]string{}

func init() {
	for i := range oneChar {
		oneChar[i] = string(rune(i))
	}
}

func (g *generator) fillOrders() datagen.Fill {
	return func(b *array.RecordBuilder, from, to int64) error {
		c := cols{b}
		key, cust, status, total, date := c.i64(0), c.i64(1), c.str(2), c.dec(3), c.date(4)
		prio, clerk, shipPrio, comment := c.str(5), c.str(6), c.i32(7), c.str(8)
		var buf []byte
		var o orderCore
		for i := from; i < to; i++ {
			g.orderCore(i, &o)
			r := datagen.NewRand(g.seed, streamOrder, uint64(i))
			key.Append(orderKey(i))
			// A third of the customers (keys divisible by 3) place no
			// orders (clause 4.2.3: O_CUSTKEY).
			ck := r.Range(1, g.s.customers)
			if ck%3 == 0 {
				ck++
				if ck > g.s.customers {
					ck -= 2
				}
			}
			cust.Append(ck)
			t, st := o.totals()
			status.AppendString(oneChar[st])
			total.Append(money(t))
			date.Append(arrow.Date32(o.date))
			prio.AppendString(priorities[r.Intn(int64(len(priorities)))])
			buf = appendPadded(append(buf[:0], "Clerk#"...), r.Range(1, g.s.clerks), 9)
			clerk.BinaryBuilder.Append(buf)
			shipPrio.Append(0)
			comment.AppendString(g.text.comment(&r, 19, 78))
		}
		return nil
	}
}

func (g *generator) fillLineitem() datagen.Fill {
	return func(b *array.RecordBuilder, from, to int64) error {
		c := cols{b}
		okey, pkey, skey, num := c.i64(0), c.i64(1), c.i64(2), c.i64(3)
		qty, price, disc, tax := c.dec(4), c.dec(5), c.dec(6), c.dec(7)
		flag, status, ship, commit, receipt := c.str(8), c.str(9), c.date(10), c.date(11), c.date(12)
		instruct, mode, comment := c.str(13), c.str(14), c.str(15)
		var o orderCore
		for i := from; i < to; i++ {
			g.orderCore(i, &o)
			r := datagen.NewRand(g.seed, streamLineText, uint64(i))
			k := orderKey(i)
			for n, l := range o.lines[:o.n] {
				okey.Append(k)
				pkey.Append(l.partkey)
				skey.Append(l.suppkey)
				num.Append(int64(n + 1))
				qty.Append(money(l.quantity * 100))
				price.Append(money(l.price))
				disc.Append(money(l.discount))
				tax.Append(money(l.tax))
				flag.AppendString(oneChar[l.returnFlag])
				status.AppendString(oneChar[l.lineStatus])
				ship.Append(arrow.Date32(l.ship))
				commit.Append(arrow.Date32(l.commit))
				receipt.Append(arrow.Date32(l.receipt))
				instruct.AppendString(instructions[r.Intn(int64(len(instructions)))])
				mode.AppendString(shipModes[r.Intn(int64(len(shipModes)))])
				comment.AppendString(g.text.comment(&r, 10, 43))
			}
		}
		return nil
	}
}

func (g *generator) fillNation() datagen.Fill {
	return func(b *array.RecordBuilder, from, to int64) error {
		c := cols{b}
		for i := from; i < to; i++ {
			r := datagen.NewRand(g.seed, streamNation, uint64(i))
			n := nations[i-1]
			c.i32(0).Append(int32(i - 1))
			c.str(1).AppendString(n.name)
			c.i32(2).Append(n.region)
			c.str(3).AppendString(g.text.comment(&r, 31, 114))
		}
		return nil
	}
}

func (g *generator) fillRegion() datagen.Fill {
	return func(b *array.RecordBuilder, from, to int64) error {
		c := cols{b}
		for i := from; i < to; i++ {
			r := datagen.NewRand(g.seed, streamRegion, uint64(i))
			c.i32(0).Append(int32(i - 1))
			c.str(1).AppendString(regions[i-1])
			c.str(2).AppendString(g.text.comment(&r, 31, 115))
		}
		return nil
	}
}
