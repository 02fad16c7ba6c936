package clickbench

import (
	"strconv"
	"time"

	"github.com/clink-sql/clink/datagen"
)

// Random streams, each keyed by its entity's index.
const (
	streamRow = iota + 1
	streamUser
	streamURL
	streamTitle
	streamPhrase
	streamReferer
)

// Values some of the 43 queries look for, planted so that they find rows.
const (
	plantedUserID      = 435090932899640449  // Q19: WHERE UserID = ...
	plantedURLHash     = 2868770270353813622 // Q41: the most popular URL's hash
	plantedRefererHash = 3594120000172545465 // Q40: the hash of the empty referer
	bigCounter         = 62                  // Q36-Q42: WHERE CounterID = 62
)

// July 2013, the month of the events.
var (
	monthStart = time.Date(2013, 7, 1, 0, 0, 0, 0, time.UTC).Unix()
	monthSecs  = int64(31 * 24 * 3600)
)

// generator is one generation's read-only state: cardinalities scale with
// the row count, so a small table is a miniature of a big one.
type generator struct {
	seed    uint64
	users   int64
	urls    int64
	phrases int64
}

func newGenerator(seed uint64, rows int64) *generator {
	return &generator{
		seed:    seed,
		users:   max(rows/6, 16),
		urls:    max(rows/4, 16),
		phrases: max(rows/20, 16),
	}
}

// skewed draws an index in [0, n) where small indexes are far more likely
// (x^power of a uniform x): the popularity curve of users, URLs, phrases.
func skewed(r *datagen.Rand, n int64, power int) int64 {
	x := r.Float64()
	y := x
	for i := 1; i < power; i++ {
		y *= x
	}
	return min(int64(y*float64(n)), n-1)
}

// pick draws from a weighted list of values.
type pick[T any] struct {
	vals []T
	w    datagen.Weighted
}

func newPick[T any](vals []T, weights []int) pick[T] {
	return pick[T]{vals: vals, w: datagen.NewWeighted(weights)}
}

func (p pick[T]) draw(r *datagen.Rand) T { return p.vals[p.w.Pick(r)] }

var (
	counters = func() []int32 {
		// A few hundred counters besides 62, spread over a wide range.
		out := make([]int32, 0, 400)
		seen := map[int32]bool{bigCounter: true}
		for i := uint64(1); len(out) < 400; i++ {
			id := int32(datagen.Mix(i)%250_000) + 1
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
		return out
	}()
	traficSources = newPick([]int16{-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, []int{5, 30, 15, 10, 8, 5, 5, 8, 4, 4, 3, 3})
	advEngines    = newPick([]int16{2, 3, 4, 12, 13, 16, 27, 30}, []int{40, 20, 10, 10, 8, 5, 4, 3})
	searchEngines = newPick([]int16{2, 3, 1, 4, 5, 6, 7, 9, 11, 13}, []int{50, 30, 5, 4, 3, 2, 2, 2, 1, 1})
	timeZones     = newPick([]int16{3, 4, 2, -1, 5, 6, 1, 0, 7, 9, 10, -5}, []int{50, 15, 10, 8, 5, 3, 3, 2, 1, 1, 1, 1})
	charsets      = newPick([]string{"utf-8", "windows-1251", "", "koi8-r"}, []int{60, 33, 5, 2})
	hitColors     = newPick([]string{"F", "E", "D", "T"}, []int{60, 25, 10, 5})
	currencies    = newPick([]string{"", "RUB", "USD", "EUR"}, []int{97, 2, 1, 1})
	utmSources    = newPick([]string{"", "yandex", "google", "begun", "direct", "vk"}, []int{95, 2, 1, 1, 1, 1})
	resolutions   = newPick([][2]int16{{1366, 768}, {1920, 1080}, {1280, 1024}, {1280, 800}, {1024, 768},
		{1440, 900}, {1600, 900}, {1680, 1050}, {1920, 1200}, {1360, 768}, {2560, 1440}, {800, 600}, {0, 0}},
		[]int{30, 20, 12, 8, 8, 6, 5, 4, 2, 2, 1, 1, 1})
	mobileRes = newPick([][2]int16{{320, 480}, {768, 1024}, {360, 640}, {480, 800}, {720, 1280}, {1080, 1920}},
		[]int{30, 25, 20, 10, 10, 5})
	languages = []string{"ru", "en", "uk", "be", "kk", "de", "tr", "fr", "es", "it", "pl", "zh", "ja", "pt", "nl",
		"cs", "fi", "sv", "ro", "hu", "el", "bg", "he", "ar", "ko", "uz", "az", "hy", "ka", "lt", "lv", "et"}
	countries = []string{"RU", "UA", "BY", "KZ", "US", "DE", "TR", "GB", "FR", "IL", "UZ", "CN", "PL", "IT", "ES",
		"NL", "CZ", "FI", "SE", "LT", "LV", "EE", "GE", "AM", "AZ", "MD", "KG", "TJ", "CA", "JP", "KR", "BR",
		"IN", "AU", "AT", "CH", "BE", "GR", "BG", "RO", "HU", "RS", "HR", "SK", "NO", "DK", "IE", "PT", "TH", "VN"}
	phoneModels = []string{"iPad", "iPhone", "GT-I9300", "GT-I9100", "GT-N7100", "GT-S5830", "Lumia 920",
		"Nexus 7", "Nexus 4", "HTC One", "Xperia Z", "GT-P5100", "GT-I8190", "A1000", "LT26i", "MT27i",
		"C6603", "SGH-I337", "SCH-I535", "XT910", "U8860", "Desire HD", "Galaxy Tab", "Kindle Fire",
		"iPod", "Lumia 800", "ST25i", "GT-S7562", "GT-P3100", "HUAWEI U8950", "Lenovo P770", "Fly IQ4404"}
	uaMinors = []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15",
		"16", "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27", "28", "29", "30", "D0", "D1", "a0", "b1"}
)

// domains are the sites URLs and referers are on, most popular first; past
// the named ones, generated names make a long tail.
var domains = func() []string {
	named := []string{
		"avito.ru", "yandex.ru", "vk.com", "mail.ru", "odnoklassniki.ru", "news.yandex.ru", "auto.ru",
		"irr.ru", "kinopoisk.ru", "google.ru", "rambler.ru", "livejournal.com", "video.mail.ru",
		"youtube.com", "images.google.ru", "kp.ru", "rbc.ru", "lenta.ru", "sport-express.ru",
		"ria.ru", "maps.google.com", "hh.ru", "2gis.ru", "gismeteo.ru", "drom.ru", "cian.ru",
		"news.google.com", "games.mail.ru", "ozon.ru", "wildberries.ru", "afisha.ru", "championat.com",
		"google.com", "film.ru", "ivi.ru", "movie.ru", "shop.ru", "market.yandex.ru", "wikipedia.org",
	}
	out := append([]string(nil), named...)
	for i := 0; len(out) < 600; i++ {
		out = append(out, "site"+strconv.Itoa(i)+tlds[i%len(tlds)])
	}
	return out
}()

var tlds = []string{".ru", ".com", ".net", ".org", ".su", ".ua", ".by", ".kz"}

// words make paths, titles and search phrases.
var words = []string{
	"news", "sport", "video", "games", "weather", "auto", "cars", "music", "movie", "film", "photo",
	"work", "jobs", "travel", "hotels", "flights", "shop", "cart", "catalog", "price", "sale", "buy",
	"rent", "apartment", "house", "map", "football", "hockey", "tennis", "moscow", "petersburg", "kiev",
	"minsk", "online", "free", "download", "watch", "series", "season", "episode", "best", "new", "top",
	"cheap", "used", "phone", "iphone", "samsung", "laptop", "tablet", "tv", "recipe", "food", "health",
	"doctor", "school", "university", "exam", "book", "library", "forum", "blog", "chat", "dating",
	"love", "wedding", "children", "toys", "clothes", "shoes", "dress", "bank", "credit", "loan",
	"insurance", "tax", "law", "business", "finance", "stocks", "dollar", "euro", "ruble", "russia",
	"ukraine", "europe", "world", "politics", "election", "president", "city", "region", "street",
	"metro", "bus", "train", "ticket", "concert", "theatre", "cinema", "schedule", "result", "score",
	"league", "cup", "championship", "olympic", "winter", "summer", "july", "2013", "guide", "review",
	"test", "how", "what", "where", "when", "why", "download", "program", "windows", "android", "game",
	"minecraft", "tanks", "online", "social", "network", "mail", "search", "maps", "translate",
}

// userAttrs are a visitor's properties, the same on every hit of the user.
type userAttrs struct {
	id                        int64
	fuid                      int64
	region                    int32
	clientIP, ipNetwork       int32
	os, userAgent, uaMajor    int16
	uaMinor                   string
	resW, resH, resDepth      int16
	isMobile, mobilePhone     int16
	model                     string
	tz                        int16
	age, sex, income, interes int16
	java, cookie, js          int16
	flashMajor, flashMinor    int16
	flashMinor2               string
	silverlight1, silverlight int16
	silverlight3              int32
	lang, country             string
	netMajor, netMinor        int16
}

func (g *generator) user(u int64, a *userAttrs) {
	r := datagen.NewRand(g.seed, streamUser, uint64(u))
	a.id = int64(r.Uint64() >> 1)
	if u == 3 {
		a.id = plantedUserID
	}
	a.fuid = 0
	if r.Intn(3) > 0 {
		a.fuid = int64(r.Uint64() >> 2)
	}
	// Regions: a few big cities, a long tail of ~3000.
	k := skewed(&r, 3000, 3)
	a.region = int32(datagen.Mix(uint64(k)+77)%15000) + 1
	a.clientIP = int32(r.Uint64())
	a.ipNetwork = int32(r.Intn(4_000_000))
	a.os = int16(skewed(&r, 90, 2))
	a.userAgent = int16(skewed(&r, 120, 2))
	a.uaMajor = int16(skewed(&r, 40, 2))
	a.uaMinor = uaMinors[skewed(&r, int64(len(uaMinors)), 2)]
	a.isMobile, a.mobilePhone, a.model = 0, 0, ""
	res := resolutions.draw(&r)
	if r.Intn(10) == 0 {
		a.isMobile = 1
		a.mobilePhone = int16(1 + skewed(&r, 60, 2))
		a.model = phoneModels[skewed(&r, int64(len(phoneModels)), 2)]
		res = mobileRes.draw(&r)
	}
	a.resW, a.resH = res[0], res[1]
	a.resDepth = 24
	if r.Intn(3) == 0 {
		a.resDepth = 32
	}
	a.tz = timeZones.draw(&r)
	a.age = int16(r.Intn(6) * 10) // 0: unknown
	a.sex = int16(r.Intn(3))
	a.income = int16(r.Intn(5))
	a.interes = int16(r.Intn(4000))
	a.java = int16(min(r.Intn(10), 1))
	a.cookie = int16(min(r.Intn(50), 1))
	a.js = int16(min(r.Intn(30), 1))
	a.flashMajor = int16(r.Intn(12))
	a.flashMinor = int16(r.Intn(10))
	a.flashMinor2 = ""
	if a.flashMajor > 0 {
		a.flashMinor2 = strconv.Itoa(int(r.Intn(200)))
	}
	a.silverlight1 = int16(r.Intn(6))
	a.silverlight = int16(r.Intn(2))
	a.silverlight3 = int32(r.Intn(60_000))
	a.lang = languages[skewed(&r, int64(len(languages)), 3)]
	a.country = countries[skewed(&r, int64(len(countries)), 3)]
	if r.Intn(50) == 0 {
		a.lang, a.country = "", ""
	}
	a.netMajor = int16(r.Intn(5))
	a.netMinor = int16(r.Intn(5))
}

// appendURL appends URL number idx: a scheme, a site (popular ones more
// often), a section and a page, so that URLs share prefixes by site and
// section.
func (g *generator) appendURL(b []byte, idx int64) []byte {
	r := datagen.NewRand(g.seed, streamURL, uint64(idx))
	if r.Intn(10) == 0 {
		b = append(b, "https://"...)
	} else {
		b = append(b, "http://"...)
	}
	d := domains[skewed(&r, int64(len(domains)), 2)]
	if r.Intn(3) == 0 {
		b = append(b, "www."...)
	}
	b = append(b, d...)
	b = append(b, '/')
	b = append(b, words[skewed(&r, int64(len(words)), 2)]...)
	switch r.Intn(5) {
	case 0:
		b = append(b, '/')
		b = append(b, words[r.Intn(int64(len(words)))]...)
		b = append(b, '/')
		b = strconv.AppendInt(b, r.Intn(1_000_000), 10)
		b = append(b, ".html"...)
	case 1:
		b = append(b, "?id="...)
		b = strconv.AppendInt(b, r.Intn(10_000_000), 10)
	case 2:
		b = append(b, '/')
		b = strconv.AppendInt(b, r.Intn(100_000), 10)
		b = append(b, '/')
	case 3:
		b = append(b, "/index.php?page="...)
		b = strconv.AppendInt(b, r.Intn(1000), 10)
		b = append(b, "&sort=price"...)
	default:
		b = append(b, '/')
		b = append(b, words[r.Intn(int64(len(words)))]...)
		b = append(b, '-')
		b = append(b, words[r.Intn(int64(len(words)))]...)
		b = append(b, '-')
		b = strconv.AppendInt(b, r.Intn(100_000), 10)
		b = append(b, ".html"...)
	}
	return b
}

func urlHash(seed uint64, idx int64) int64 {
	if idx == 0 {
		return plantedURLHash
	}
	return int64(datagen.Mix(seed ^ datagen.Mix(uint64(idx)+0x5151)))
}

// appendTitle appends title number idx: a few words, now and then a brand
// that the queries search for (Google).
func (g *generator) appendTitle(b []byte, idx int64) []byte {
	r := datagen.NewRand(g.seed, streamTitle, uint64(idx))
	n := 2 + r.Intn(6)
	for i := int64(0); i < n; i++ {
		if i > 0 {
			b = append(b, ' ')
		}
		w := words[skewed(&r, int64(len(words)), 2)]
		if i == 0 {
			b = append(b, w[0]-'a'+'A')
			w = w[1:]
		}
		b = append(b, w...)
	}
	switch r.Intn(40) {
	case 0:
		b = append(b, " - Google Search"...)
	case 1:
		b = append(b, " - Google Maps"...)
	}
	b = append(b, " - "...)
	return append(b, domains[skewed(&r, int64(len(domains)), 2)]...)
}

// appendPhrase appends search phrase number idx: 1-4 words, sometimes with
// a number.
func (g *generator) appendPhrase(b []byte, idx int64) []byte {
	r := datagen.NewRand(g.seed, streamPhrase, uint64(idx))
	n := 1 + r.Intn(4)
	for i := int64(0); i < n; i++ {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, words[skewed(&r, int64(len(words)), 2)]...)
	}
	if r.Intn(8) == 0 {
		b = append(b, ' ')
		b = strconv.AppendInt(b, r.Intn(3000), 10)
	}
	return b
}

// appendReferer appends referer number idx: a search engine's result page
// for a phrase, or a page of another site.
func (g *generator) appendReferer(b []byte, idx int64) []byte {
	r := datagen.NewRand(g.seed, streamReferer, uint64(idx))
	switch r.Intn(4) {
	case 0:
		b = append(b, "http://yandex.ru/yandsearch?text="...)
		return g.appendPhrase(b, skewed(&r, g.phrases, 2))
	case 1:
		b = append(b, "http://www.google.ru/search?q="...)
		return g.appendPhrase(b, skewed(&r, g.phrases, 2))
	}
	return g.appendURL(b, skewed(&r, g.urls, 2))
}
