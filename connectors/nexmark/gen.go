package nexmark

import (
	"math"
	"math/bits"
	"strconv"
	"sync"
)

// Shape constants of the reference generator (Beam/Flink GeneratorConfig,
// PersonGenerator, AuctionGenerator, BidGenerator).
const (
	firstPersonID       = 1000
	firstAuctionID      = 1000
	firstCategoryID     = 10
	numCategories       = 5
	numActivePeople     = 1000
	numInFlightAuctions = 100
	personIDLead        = 10
	auctionIDLead       = 10

	// 1 in hotXRatio draws picks a uniformly random id; the rest pick the
	// current "hot" one (the last id rounded down to a multiple of hotStep).
	hotAuctionRatio = 2
	hotSellersRatio = 4
	hotBiddersRatio = 4
	hotStep         = 100

	hotChannelsRatio = 2
	channelsNumber   = 10000

	avgPersonBytes  = 200
	avgAuctionBytes = 500
	avgBidBytes     = 100

	// baseTimeUs is 2015-07-15T00:00:00Z, the reference BASE_TIME.
	baseTimeUs = 1436918400 * 1_000_000

	// defaultRate sets the event-time spacing of an unpaced generator: the
	// reference default of 10,000 events per second.
	defaultRate = 10_000
	// halfPeriodUs is half the reference rate period (600 s): with distinct
	// first and next rates, the rate is a square wave alternating between
	// them every 300 s of event time.
	halfPeriodUs = 300 * 1_000_000
)

// Event kinds, as the wide table's event_type column numbers them.
const (
	kindPerson  uint8 = 0
	kindAuction uint8 = 1
	kindBid     uint8 = 2
	kindAny     uint8 = 255
)

var (
	usStates   = []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	usCities   = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	firstNames = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	hotChannel = []string{"Google", "Facebook", "Baidu", "Apple"}
)

// clock maps an event number to its event time. With one rate the events
// are evenly spaced (the reference timestampUsForEvent); with two it runs a
// square wave: rate1 for half a period, rate2 for the next half.
type clock struct {
	rate1, rate2 int64
	e1, e2       int64 // events in each half period
}

func newClock(first, next int64) clock {
	if first <= 0 && next <= 0 {
		first, next = defaultRate, defaultRate
	} else if first <= 0 {
		first = next
	} else if next <= 0 {
		next = first
	}
	return clock{rate1: first, rate2: next,
		e1: first * (halfPeriodUs / 1_000_000), e2: next * (halfPeriodUs / 1_000_000)}
}

// offsetUs is event n's time after the first event's, in microseconds.
func (c *clock) offsetUs(n int64) int64 {
	if c.rate1 == c.rate2 {
		return mulDiv(n, 1_000_000, c.rate1)
	}
	cycle := c.e1 + c.e2
	k, m := n/cycle, n%cycle
	off := k * 2 * halfPeriodUs
	if m < c.e1 {
		return off + mulDiv(m, 1_000_000, c.rate1)
	}
	return off + halfPeriodUs + mulDiv(m-c.e1, 1_000_000, c.rate2)
}

// timeMs is event n's time in epoch milliseconds (TIMESTAMP(3)).
func (c *clock) timeMs(n int64) int64 { return (baseTimeUs + c.offsetUs(n)) / 1000 }

// mulDiv is a*b/d without overflowing the product, saturating at MaxInt64.
func mulDiv(a, b, d int64) int64 {
	if a < math.MaxInt64/b {
		return a * b / d
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(d) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(d))
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// gen derives every field of every event from (seed, event number).
type gen struct {
	seedKey uint64
	// Proportions: events n with n%total in [0,p) are people, [p,pa)
	// auctions, [pa,total) bids.
	p, a, pa, total int64
	clock           clock

	// The four hot channels' URLs, drawn once per seed.
	urlsOnce sync.Once
	hotURLs  [4]string
}

func newGen(c *config) *gen {
	return &gen{
		seedKey: mix64(uint64(c.seed) + gamma),
		p:       c.personProp, a: c.auctionProp,
		pa:    c.personProp + c.auctionProp,
		total: c.personProp + c.auctionProp + c.bidProp,
		clock: newClock(c.firstRate, c.nextRate),
	}
}

// event is what every field function knows of an event.
type event struct {
	n   int64  // event number
	tms int64  // event time, epoch ms
	key uint64 // mix of (seed, n), the base of the event's field streams
}

func (g *gen) event(n int64) event {
	return event{n: n, tms: g.clock.timeMs(n), key: mix64(g.seedKey + uint64(n)*gamma)}
}

// rng is field f's stream for the event.
func (e *event) rng(f field) rng {
	return rng{s: e.key + uint64(f)*streamStep}
}

func (g *gen) kind(n int64) uint8 {
	rem := n % g.total
	switch {
	case rem < g.p:
		return kindPerson
	case rem < g.pa:
		return kindAuction
	}
	return kindBid
}

// kindRange is the [lo, hi) slice of each proportion cycle holding kind k.
func (g *gen) kindRange(k uint8) (lo, hi int64) {
	switch k {
	case kindPerson:
		return 0, g.p
	case kindAuction:
		return g.p, g.pa
	case kindBid:
		return g.pa, g.total
	}
	return 0, g.total
}

// nextOfKind is the first event number >= n of kind k (k must have a
// non-empty range).
func (g *gen) nextOfKind(n int64, k uint8) int64 {
	if k == kindAny {
		return n
	}
	lo, hi := g.kindRange(k)
	epoch, rem := n/g.total, n%g.total
	switch {
	case rem < lo:
		return epoch*g.total + lo
	case rem < hi:
		return n
	}
	return (epoch+1)*g.total + lo
}

// countOfKind is how many of the events [0, n) are of kind k.
func (g *gen) countOfKind(n int64, k uint8) int64 {
	lo, hi := g.kindRange(k)
	epoch, rem := n/g.total, n%g.total
	return epoch*(hi-lo) + min(max(rem-lo, 0), hi-lo)
}

// lastBase0PersonID is the 0-based id of the last person created at or
// before event n.
func (g *gen) lastBase0PersonID(n int64) int64 {
	epoch, off := n/g.total, n%g.total
	if off >= g.p {
		off = g.p - 1
	}
	return epoch*g.p + off
}

// lastBase0AuctionID is the 0-based id of the last auction created at or
// before event n.
func (g *gen) lastBase0AuctionID(n int64) int64 {
	epoch, off := n/g.total, n%g.total
	switch {
	case off < g.p:
		epoch--
		off = g.a - 1
	case off >= g.pa:
		off = g.a - 1
	default:
		off -= g.p
	}
	return epoch*g.a + off
}

// nextBase0PersonID picks one of the recently active people (and a few not
// yet created, as the reference does).
func (g *gen) nextBase0PersonID(n int64, r *rng) int64 {
	numPeople := g.lastBase0PersonID(n) + 1
	active := min(numPeople, numActivePeople)
	return numPeople - active + r.intn(active+personIDLead)
}

// nextBase0AuctionID picks one of the auctions in flight.
func (g *gen) nextBase0AuctionID(n int64, r *rng) int64 {
	maxA := g.lastBase0AuctionID(n)
	minA := max(maxA-numInFlightAuctions, 0)
	return minA + r.intn(maxA-minA+1+auctionIDLead)
}

// ---- person ----

func (g *gen) personID(e *event) int64 { return g.lastBase0PersonID(e.n) + firstPersonID }

func (g *gen) personNameParts(e *event) (string, string) {
	r := e.rng(fPersonName)
	f := firstNames[r.intn(int64(len(firstNames)))]
	return f, lastNames[r.intn(int64(len(lastNames)))]
}

func (g *gen) personName(dst []byte, e *event) []byte {
	f, l := g.personNameParts(e)
	dst = append(dst, f...)
	dst = append(dst, ' ')
	return append(dst, l...)
}

func (g *gen) personEmail(dst []byte, e *event) []byte {
	r := e.rng(fPersonEmailUser)
	dst = nextString(dst, &r, 7, ' ')
	dst = append(dst, '@')
	r = e.rng(fPersonEmailDomain)
	dst = nextString(dst, &r, 5, ' ')
	return append(dst, ".com"...)
}

func (g *gen) personCard(dst []byte, e *event) []byte {
	r := e.rng(fPersonCard)
	for i := 0; i < 4; i++ {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = appendPadded4(dst, r.intn(10000))
	}
	return dst
}

func (g *gen) personCity(dst []byte, e *event) []byte {
	r := e.rng(fPersonCity)
	return append(dst, usCities[r.intn(int64(len(usCities)))]...)
}

func (g *gen) personState(dst []byte, e *event) []byte {
	r := e.rng(fPersonState)
	return append(dst, usStates[r.intn(int64(len(usStates)))]...)
}

func (g *gen) personExtra(dst []byte, e *event) []byte {
	f, l := g.personNameParts(e)
	rc, rs := e.rng(fPersonCity), e.rng(fPersonState)
	size := 8 + len(f) + 1 + len(l) +
		stringLength(e.rng(fPersonEmailUser), 7) + 1 + stringLength(e.rng(fPersonEmailDomain), 5) + 4 +
		19 + len(usCities[rc.intn(int64(len(usCities)))]) + len(usStates[rs.intn(int64(len(usStates)))])
	r := e.rng(fPersonExtra)
	return nextExtra(dst, &r, size, avgPersonBytes)
}

// ---- auction ----

func (g *gen) auctionID(e *event) int64 { return g.lastBase0AuctionID(e.n) + firstAuctionID }

func (g *gen) auctionItemName(dst []byte, e *event) []byte {
	r := e.rng(fAuctionItemName)
	return nextString(dst, &r, 20, ' ')
}

func (g *gen) auctionDesc(dst []byte, e *event) []byte {
	r := e.rng(fAuctionDesc)
	return nextString(dst, &r, 100, ' ')
}

func (g *gen) auctionInitialBid(e *event) int64 {
	r := e.rng(fAuctionInitialBid)
	return nextPrice(&r)
}

func (g *gen) auctionReserve(e *event) int64 {
	r := e.rng(fAuctionReserve)
	return g.auctionInitialBid(e) + nextPrice(&r)
}

// auctionExpires: an auction runs for up to twice the time it takes to
// create numInFlightAuctions more auctions, so about that many are open.
func (g *gen) auctionExpires(e *event) int64 {
	ahead := numInFlightAuctions * g.total / g.a
	horizon := g.clock.timeMs(e.n+ahead) - e.tms
	r := e.rng(fAuctionExpires)
	return e.tms + 1 + r.intn(max(horizon*2, 1))
}

func (g *gen) auctionSeller(e *event) int64 {
	r := e.rng(fAuctionSeller)
	var s int64
	if r.intn(hotSellersRatio) > 0 {
		s = g.lastBase0PersonID(e.n) / hotStep * hotStep
	} else {
		s = g.nextBase0PersonID(e.n, &r)
	}
	return s + firstPersonID
}

func (g *gen) auctionCategory(e *event) int64 {
	r := e.rng(fAuctionCategory)
	return firstCategoryID + r.intn(numCategories)
}

func (g *gen) auctionExtra(dst []byte, e *event) []byte {
	size := 8 + stringLength(e.rng(fAuctionItemName), 20) + stringLength(e.rng(fAuctionDesc), 100) + 5*8
	r := e.rng(fAuctionExtra)
	return nextExtra(dst, &r, size, avgAuctionBytes)
}

// ---- bid ----

func (g *gen) bidAuction(e *event) int64 {
	r := e.rng(fBidAuction)
	var a int64
	if r.intn(hotAuctionRatio) > 0 {
		a = g.lastBase0AuctionID(e.n) / hotStep * hotStep
	} else {
		a = g.nextBase0AuctionID(e.n, &r)
	}
	return a + firstAuctionID
}

func (g *gen) bidBidder(e *event) int64 {
	r := e.rng(fBidBidder)
	var b int64
	if r.intn(hotBiddersRatio) > 0 {
		b = g.lastBase0PersonID(e.n)/hotStep*hotStep + 1
	} else {
		b = g.nextBase0PersonID(e.n, &r)
	}
	return b + firstPersonID
}

func (g *gen) bidPrice(e *event) int64 {
	r := e.rng(fBidPrice)
	return nextPrice(&r)
}

// bidChannelIndex: half the bids come through one of the four hot channels,
// the rest through one of 10,000 others. Both bidChannel and bidURL use it.
func (g *gen) bidChannelIndex(e *event) (hot bool, i int64) {
	r := e.rng(fBidChannel)
	if r.intn(hotChannelsRatio) > 0 {
		return true, r.intn(int64(len(hotChannel)))
	}
	return false, r.intn(channelsNumber)
}

func (g *gen) bidChannel(dst []byte, e *event) []byte {
	hot, i := g.bidChannelIndex(e)
	if hot {
		return append(dst, hotChannel[i]...)
	}
	return strconv.AppendInt(append(dst, "channel-"...), i, 10)
}

func (g *gen) bidURL(dst []byte, e *event) []byte {
	hot, i := g.bidChannelIndex(e)
	if hot {
		return append(dst, g.hotURLs[i]...)
	}
	return g.channelURL(dst, i)
}

// channelURL is the URL of the non-hot channel i. The reference caches
// the 10,000 of them; drawing one from its own stream is as cheap as a
// lookup that misses the cache, and needs no table.
func (g *gen) channelURL(dst []byte, i int64) []byte {
	r := rng{s: mix64(g.seedKey^0x6a09e667f3bcc909) + uint64(i)*streamStep}
	dst = baseURL(dst, &r)
	if r.intn(10) > 0 {
		dst = append(dst, "&channel_id="...)
		id := int64(int32(bits.Reverse32(uint32(i))))
		if id < 0 {
			id = -id
		}
		dst = strconv.AppendInt(dst, id, 10)
	}
	return dst
}

func (g *gen) bidExtra(dst []byte, e *event) []byte {
	r := e.rng(fBidExtra)
	return nextExtra(dst, &r, 4*8, avgBidBytes)
}

// ---- shared ----

func (g *gen) dateTime(e *event) int64 { return e.tms }

// initURLs draws the hot channels' URLs. They depend only on the seed.
func (g *gen) initURLs() {
	g.urlsOnce.Do(func() {
		r := rng{s: mix64(g.seedKey ^ 0xbb67ae8584caa73b)}
		for i := range g.hotURLs {
			g.hotURLs[i] = string(baseURL(nil, &r))
		}
	})
}

func baseURL(dst []byte, r *rng) []byte {
	dst = append(dst, "https://www.nexmark.com/"...)
	dst = nextString(dst, r, 5, '_')
	dst = append(dst, '/')
	dst = nextString(dst, r, 5, '_')
	dst = append(dst, '/')
	dst = nextString(dst, r, 5, '_')
	return append(dst, "/item.htm?query=1"...)
}
