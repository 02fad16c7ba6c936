package clickbench

import (
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/clink-sql/clink/datagen"
)

// hit is one row's correlated core: who, when, where. The other columns
// are drawn from r (in column order) or derived from these.
type hit struct {
	r                                  datagen.Rand
	u                                  userAttrs
	row                                int64
	t                                  int64 // seconds since the epoch, UTC
	counter                            int32
	url, title, referer, phrase        int64 // -1: empty
	search, adv, trafic                int16
	refresh, dontCount, link, download int16
}

func (g *generator) core(row int64, h *hit) {
	h.r = datagen.NewRand(g.seed, streamRow, uint64(row))
	r := &h.r
	h.row = row
	g.user(skewed(r, g.users, 3), &h.u)
	h.counter = bigCounter
	if r.Intn(4) > 0 {
		h.counter = counters[skewed(r, int64(len(counters)), 2)]
	}
	h.t = monthStart + r.Intn(monthSecs)
	h.url = -1
	if r.Intn(64) > 0 {
		h.url = skewed(r, g.urls, 2)
	}
	h.title = -1
	if r.Intn(32) > 0 {
		if h.url >= 0 && r.Intn(4) > 0 {
			h.title = h.url / 3 // a page keeps its title
		} else {
			h.title = skewed(r, g.urls/3, 2)
		}
	}
	h.phrase = -1
	if r.Intn(25) < 3 {
		h.phrase = skewed(r, g.phrases, 2)
	}
	h.referer = -1
	if r.Intn(20) >= 7 {
		h.referer = skewed(r, g.urls, 2)
	}
	h.search = 0
	if h.phrase >= 0 || r.Intn(100) == 0 {
		h.search = searchEngines.draw(r)
	}
	h.adv = 0
	if r.Intn(64) == 0 {
		h.adv = advEngines.draw(r)
	}
	h.trafic = traficSources.draw(r)
	h.refresh = bit(r, 10)
	h.dontCount = bit(r, 16)
	h.link = bit(r, 25)
	h.download = bit(r, 100)
}

// bit is 1 with probability 1/n.
func bit(r *datagen.Rand, n int64) int16 {
	if r.Intn(n) == 0 {
		return 1
	}
	return 0
}

// column is one column of hits: its type (create.sql's), whether it may be
// NULL there, and how a hit's value is made: num for the integer, date
// and timestamp columns, str (appending to a scratch buffer) for text.
type column struct {
	name     string
	typ      arrow.DataType
	nullable bool
	num      func(g *generator, h *hit) int64
	str      func(g *generator, h *hit, b []byte) []byte
}

var (
	tSmall = arrow.PrimitiveTypes.Int16
	tInt   = arrow.PrimitiveTypes.Int32
	tBig   = arrow.PrimitiveTypes.Int64
	tText  = arrow.BinaryTypes.String
	tTime  = &arrow.TimestampType{Unit: arrow.Microsecond}
	tDate  = arrow.FixedWidthTypes.Date32
)

func num(name string, typ arrow.DataType, f func(g *generator, h *hit) int64) column {
	return column{name: name, typ: typ, num: f}
}

func text(name string, nullable bool, f func(g *generator, h *hit, b []byte) []byte) column {
	return column{name: name, typ: tText, nullable: nullable, str: f}
}

// small is a SMALLINT drawn uniformly from [0, n) (n = 1: always 0).
func small(name string, n int64) column {
	return num(name, tSmall, func(_ *generator, h *hit) int64 { return h.r.Intn(n) })
}

func empty(name string) column {
	return text(name, true, func(_ *generator, _ *hit, b []byte) []byte { return b })
}

func str(s string) func(*generator, *hit, []byte) []byte {
	return func(_ *generator, _ *hit, b []byte) []byte { return append(b, s...) }
}

func micros(secs int64) int64 { return secs * 1_000_000 }

// columns are the 105 columns of hits, in create.sql's order.
var columns = []column{
	num("WatchID", tBig, func(g *generator, h *hit) int64 {
		return int64(datagen.Mix(g.seed^datagen.Mix(uint64(h.row)+0xa11)) >> 1)
	}),
	num("JavaEnable", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.java) }),
	text("Title", true, func(g *generator, h *hit, b []byte) []byte {
		if h.title < 0 {
			return b
		}
		return g.appendTitle(b, h.title)
	}),
	num("GoodEvent", tSmall, func(*generator, *hit) int64 { return 1 }),
	num("EventTime", tTime, func(_ *generator, h *hit) int64 { return micros(h.t) }),
	num("EventDate", tDate, func(_ *generator, h *hit) int64 { return h.t / 86400 }),
	num("CounterID", tInt, func(_ *generator, h *hit) int64 { return int64(h.counter) }),
	num("ClientIP", tInt, func(_ *generator, h *hit) int64 { return int64(h.u.clientIP) }),
	num("RegionID", tInt, func(_ *generator, h *hit) int64 { return int64(h.u.region) }),
	num("UserID", tBig, func(_ *generator, h *hit) int64 { return h.u.id }),
	small("CounterClass", 4),
	num("OS", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.os) }),
	num("UserAgent", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.userAgent) }),
	text("URL", true, func(g *generator, h *hit, b []byte) []byte {
		if h.url < 0 {
			return b
		}
		return g.appendURL(b, h.url)
	}),
	text("Referer", true, func(g *generator, h *hit, b []byte) []byte {
		if h.referer < 0 {
			return b
		}
		return g.appendReferer(b, h.referer)
	}),
	num("IsRefresh", tSmall, func(_ *generator, h *hit) int64 { return int64(h.refresh) }),
	num("RefererCategoryID", tSmall, func(_ *generator, h *hit) int64 {
		if h.referer < 0 {
			return 0
		}
		return 1 + h.referer%20
	}),
	num("RefererRegionID", tInt, func(_ *generator, h *hit) int64 {
		if h.referer < 0 {
			return 0
		}
		return int64(datagen.Mix(uint64(h.referer))%3000) + 1
	}),
	num("URLCategoryID", tSmall, func(_ *generator, h *hit) int64 {
		if h.url < 0 {
			return 0
		}
		return h.url % 21
	}),
	num("URLRegionID", tInt, func(_ *generator, h *hit) int64 {
		if h.url < 0 {
			return 0
		}
		return int64(datagen.Mix(uint64(h.url)+9) % 3000)
	}),
	num("ResolutionWidth", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.resW) }),
	num("ResolutionHeight", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.resH) }),
	num("ResolutionDepth", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.resDepth) }),
	num("FlashMajor", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.flashMajor) }),
	num("FlashMinor", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.flashMinor) }),
	text("FlashMinor2", true, func(_ *generator, h *hit, b []byte) []byte { return append(b, h.u.flashMinor2...) }),
	num("NetMajor", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.netMajor) }),
	num("NetMinor", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.netMinor) }),
	num("UserAgentMajor", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.uaMajor) }),
	text("UserAgentMinor", false, func(_ *generator, h *hit, b []byte) []byte { return append(b, h.u.uaMinor...) }),
	num("CookieEnable", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.cookie) }),
	num("JavascriptEnable", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.js) }),
	num("IsMobile", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.isMobile) }),
	num("MobilePhone", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.mobilePhone) }),
	text("MobilePhoneModel", true, func(_ *generator, h *hit, b []byte) []byte { return append(b, h.u.model...) }),
	empty("Params"),
	num("IPNetworkID", tInt, func(_ *generator, h *hit) int64 { return int64(h.u.ipNetwork) }),
	num("TraficSourceID", tSmall, func(_ *generator, h *hit) int64 { return int64(h.trafic) }),
	num("SearchEngineID", tSmall, func(_ *generator, h *hit) int64 { return int64(h.search) }),
	text("SearchPhrase", true, func(g *generator, h *hit, b []byte) []byte {
		if h.phrase < 0 {
			return b
		}
		return g.appendPhrase(b, h.phrase)
	}),
	num("AdvEngineID", tSmall, func(_ *generator, h *hit) int64 { return int64(h.adv) }),
	num("IsArtifical", tSmall, func(_ *generator, h *hit) int64 { return int64(bit(&h.r, 200)) }),
	num("WindowClientWidth", tSmall, func(_ *generator, h *hit) int64 {
		return max(int64(h.u.resW)-h.r.Intn(200), 0)
	}),
	num("WindowClientHeight", tSmall, func(_ *generator, h *hit) int64 {
		return max(int64(h.u.resH)-h.r.Intn(300), 0)
	}),
	num("ClientTimeZone", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.tz) }),
	num("ClientEventTime", tTime, func(_ *generator, h *hit) int64 { return micros(h.t + h.r.Range(-30, 30)) }),
	num("SilverlightVersion1", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.silverlight1) }),
	num("SilverlightVersion2", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.silverlight) }),
	num("SilverlightVersion3", tInt, func(_ *generator, h *hit) int64 { return int64(h.u.silverlight3) }),
	small("SilverlightVersion4", 1),
	text("PageCharset", true, func(_ *generator, h *hit, b []byte) []byte { return append(b, charsets.draw(&h.r)...) }),
	num("CodeVersion", tInt, func(_ *generator, h *hit) int64 { return 100 + int64(h.counter)%400 }),
	num("IsLink", tSmall, func(_ *generator, h *hit) int64 { return int64(h.link) }),
	num("IsDownload", tSmall, func(_ *generator, h *hit) int64 { return int64(h.download) }),
	num("IsNotBounce", tSmall, func(_ *generator, h *hit) int64 { return int64(bit(&h.r, 3)) }),
	num("FUniqID", tBig, func(_ *generator, h *hit) int64 { return h.u.fuid }),
	text("OriginalURL", true, func(g *generator, h *hit, b []byte) []byte {
		if h.url < 0 || h.r.Intn(20) > 0 {
			return b
		}
		return g.appendURL(b, h.url)
	}),
	num("HID", tInt, func(_ *generator, h *hit) int64 { return int64(int32(h.r.Uint64())) }),
	small("IsOldCounter", 1),
	num("IsEvent", tSmall, func(_ *generator, h *hit) int64 { return int64(bit(&h.r, 20)) }),
	num("IsParameter", tSmall, func(_ *generator, h *hit) int64 { return int64(bit(&h.r, 50)) }),
	num("DontCountHits", tSmall, func(_ *generator, h *hit) int64 { return int64(h.dontCount) }),
	num("WithHash", tSmall, func(_ *generator, h *hit) int64 { return int64(bit(&h.r, 30)) }),
	text("HitColor", false, func(_ *generator, h *hit, b []byte) []byte { return append(b, hitColors.draw(&h.r)...) }),
	num("LocalEventTime", tTime, func(_ *generator, h *hit) int64 { return micros(h.t + 3600*int64(h.u.tz)) }),
	num("Age", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.age) }),
	num("Sex", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.sex) }),
	num("Income", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.income) }),
	num("Interests", tSmall, func(_ *generator, h *hit) int64 { return int64(h.u.interes) }),
	num("Robotness", tSmall, func(_ *generator, h *hit) int64 { return int64(bit(&h.r, 100)) }),
	num("RemoteIP", tInt, func(_ *generator, h *hit) int64 { return int64(int32(h.r.Uint64())) }),
	num("WindowName", tInt, func(_ *generator, h *hit) int64 { return h.r.Range(-1, 100_000) }),
	num("OpenerName", tInt, func(_ *generator, h *hit) int64 { return h.r.Range(-1, 100_000) }),
	small("HistoryLength", 20),
	text("BrowserLanguage", true, func(_ *generator, h *hit, b []byte) []byte { return append(b, h.u.lang...) }),
	text("BrowserCountry", true, func(_ *generator, h *hit, b []byte) []byte { return append(b, h.u.country...) }),
	empty("SocialNetwork"),
	empty("SocialAction"),
	small("HTTPError", 1),
	num("SendTiming", tInt, timing(8, 500)),
	num("DNSTiming", tInt, timing(8, 200)),
	num("ConnectTiming", tInt, timing(8, 300)),
	num("ResponseStartTiming", tInt, timing(8, 1000)),
	num("ResponseEndTiming", tInt, timing(8, 2000)),
	num("FetchTiming", tInt, timing(8, 3000)),
	small("SocialSourceNetworkID", 1),
	empty("SocialSourcePage"),
	num("ParamPrice", tBig, func(_ *generator, h *hit) int64 {
		if h.r.Intn(100) > 0 {
			return 0
		}
		return h.r.Intn(100_000)
	}),
	empty("ParamOrderID"),
	text("ParamCurrency", true, func(_ *generator, h *hit, b []byte) []byte { return append(b, currencies.draw(&h.r)...) }),
	small("ParamCurrencyID", 1),
	empty("OpenstatServiceName"),
	empty("OpenstatCampaignID"),
	empty("OpenstatAdID"),
	empty("OpenstatSourceID"),
	text("UTMSource", true, func(_ *generator, h *hit, b []byte) []byte { return append(b, utmSources.draw(&h.r)...) }),
	empty("UTMMedium"),
	empty("UTMCampaign"),
	empty("UTMContent"),
	empty("UTMTerm"),
	empty("FromTag"),
	small("HasGCLID", 1),
	num("RefererHash", tBig, func(g *generator, h *hit) int64 {
		if h.referer < 0 {
			return plantedRefererHash
		}
		return int64(datagen.Mix(g.seed ^ datagen.Mix(uint64(h.referer)+0x7e7)))
	}),
	num("URLHash", tBig, func(g *generator, h *hit) int64 {
		if h.url < 0 {
			return 0
		}
		return urlHash(g.seed, h.url)
	}),
	num("CLID", tInt, func(*generator, *hit) int64 { return 0 }),
}

// timing is a page timing in ms: 0 (not measured) but on one hit in n.
func timing(n, maxMS int64) func(*generator, *hit) int64 {
	return func(_ *generator, h *hit) int64 {
		if h.r.Intn(n) > 0 {
			return 0
		}
		return 1 + h.r.Intn(maxMS)
	}
}

var schema = func() *arrow.Schema {
	fs := make([]arrow.Field, len(columns))
	for i, c := range columns {
		fs[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: c.nullable}
	}
	return arrow.NewSchema(fs, nil)
}()

// Schema is the hits table's Arrow schema: create.sql's 105 columns.
func Schema() *arrow.Schema { return schema }

var hitPool = sync.Pool{New: func() any { s := make([]hit, datagen.BatchRows); return &s }}

// fill builds rows [from, to): the cores first, then column by column.
func (g *generator) fill(b *array.RecordBuilder, from, to int64) error {
	hp := hitPool.Get().(*[]hit)
	defer hitPool.Put(hp)
	if int64(len(*hp)) < to-from {
		*hp = make([]hit, to-from)
	}
	hits := (*hp)[:to-from]
	for i := range hits {
		g.core(from+int64(i), &hits[i])
	}
	var buf []byte
	for ci, c := range columns {
		switch fb := b.Field(ci).(type) {
		case *array.Int16Builder:
			for i := range hits {
				fb.Append(int16(c.num(g, &hits[i])))
			}
		case *array.Int32Builder:
			for i := range hits {
				fb.Append(int32(c.num(g, &hits[i])))
			}
		case *array.Int64Builder:
			for i := range hits {
				fb.Append(c.num(g, &hits[i]))
			}
		case *array.TimestampBuilder:
			for i := range hits {
				fb.Append(arrow.Timestamp(c.num(g, &hits[i])))
			}
		case *array.Date32Builder:
			for i := range hits {
				fb.Append(arrow.Date32(c.num(g, &hits[i])))
			}
		case *array.StringBuilder:
			for i := range hits {
				buf = c.str(g, &hits[i], buf[:0])
				fb.BinaryBuilder.Append(buf)
			}
		default:
			return fmt.Errorf("column %s: no builder for %T", c.name, fb)
		}
	}
	return nil
}
