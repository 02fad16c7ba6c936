package tpch

import (
	"github.com/clink-sql/clink/datagen"
)

// textPoolSize is the length of the text every comment is cut from. The
// specification's generator cuts comments from a pool of sentences of its
// grammar; the pool here is smaller (dbgen's is 300 MB) but still holds
// millions of distinct starting points, so comments are as varied as the
// queries need (Q13's '%special%requests%', Q16's supplier complaints).
const textPoolSize = 32 << 20

// textPool is sentences of the TPC-H text grammar (clause 4.2.2.14), one
// after another, separated by spaces.
type textPool struct{ text string }

// wordList is a grammar word list with its weighted picker.
type wordList struct {
	words []word
	pick  datagen.Weighted
}

func newWordList(ws []word) wordList {
	weights := make([]int, len(ws))
	for i, w := range ws {
		weights[i] = w.weight
	}
	return wordList{words: ws, pick: datagen.NewWeighted(weights)}
}

func (l wordList) draw(r *datagen.Rand) string { return l.words[l.pick.Pick(r)].text }

// grammar is the word lists ready to draw from.
type grammar struct {
	nouns, verbs, adjectives, adverbs, prepositions, auxiliaries, terminators wordList
	sentences, nounPhrases, verbPhrases                                       wordList
}

func newGrammar() *grammar {
	return &grammar{
		nouns: newWordList(nouns), verbs: newWordList(verbs), adjectives: newWordList(adjectives),
		adverbs: newWordList(adverbs), prepositions: newWordList(prepositions),
		auxiliaries: newWordList(auxiliaries), terminators: newWordList(terminators),
		sentences: newWordList(sentenceForms), nounPhrases: newWordList(nounPhrases),
		verbPhrases: newWordList(verbPhrases),
	}
}

// newTextPool writes sentences until the pool is full (the last one cut).
func newTextPool(seed uint64) *textPool {
	g := newGrammar()
	r := datagen.NewRand(seed, streamTextPool, 0)
	buf := make([]byte, 0, textPoolSize+512)
	for len(buf) < textPoolSize {
		buf = g.sentence(buf, &r)
		buf = append(buf, ' ')
	}
	return &textPool{text: string(buf[:textPoolSize])}
}

// sentence appends one sentence: a form of the grammar, its phrases
// expanded, the terminator abutting the last word.
func (g *grammar) sentence(b []byte, r *datagen.Rand) []byte {
	form := g.sentences.draw(r)
	for i := 0; i < len(form); i++ {
		switch form[i] {
		case 'N':
			b = g.phrase(b, g.nounPhrases.draw(r), r)
		case 'V':
			b = g.phrase(b, g.verbPhrases.draw(r), r)
		case 'P':
			b = append(b, g.prepositions.draw(r)...)
			b = append(b, " the "...)
			b = g.phrase(b, g.nounPhrases.draw(r), r)
		case 'T':
			if n := len(b); n > 0 && b[n-1] == ' ' {
				b = b[:n-1]
			}
			b = append(b, g.terminators.draw(r)...)
		}
	}
	return b
}

// phrase appends a noun or verb phrase's words, each followed by its
// punctuation (a comma in "J, J N") and a space.
func (g *grammar) phrase(b []byte, form string, r *datagen.Rand) []byte {
	for i := 0; i < len(form); i++ {
		var l *wordList
		switch form[i] {
		case 'N':
			l = &g.nouns
		case 'V':
			l = &g.verbs
		case 'J':
			l = &g.adjectives
		case 'D':
			l = &g.adverbs
		case 'X':
			l = &g.auxiliaries
		default:
			continue
		}
		b = append(b, l.draw(r)...)
		if i+1 < len(form) && form[i+1] == ',' {
			b = append(b, ',')
			i++
		}
		b = append(b, ' ')
	}
	return b
}

// comment cuts a text of random length in [lo, hi] at a random place of
// the pool (clause 4.2.2.10: "a substring of the text pool").
func (p *textPool) comment(r *datagen.Rand, lo, hi int) string {
	n := int(r.Range(int64(lo), int64(hi)))
	off := int(r.Intn(int64(len(p.text) - n)))
	return p.text[off : off+n]
}

// vstringChars are the characters of a random v-string (clause 4.2.2.7).
const vstringChars = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ, "

// appendVString appends a random v-string of length in [lo, hi]. The 64
// characters take 6 bits each: one draw gives 10 characters.
func appendVString(b []byte, r *datagen.Rand, lo, hi int) []byte {
	n := int(r.Range(int64(lo), int64(hi)))
	var bits uint64
	for i := 0; i < n; i++ {
		if i%10 == 0 {
			bits = r.Uint64()
		}
		b = append(b, vstringChars[bits&63])
		bits >>= 6
	}
	return b
}
