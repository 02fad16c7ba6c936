package expr

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/clink-sql/clink/exec"
)

// More string built-ins (strict: NULL in, NULL out, except concat_ws).
// Positions and lengths count characters, not bytes, except strlen.
//
//	position(sub, s)            BIGINT: 1-based character position of the
//	                            first sub in s, 0 when absent, 1 for ''
//	                            (POSITION(sub IN s); PostgreSQL, DuckDB)
//	strpos(s, sub), instr(...)  the same with the arguments swapped
//	left(s, n), right(s, n)     VARCHAR: the first / last n characters; a
//	                            negative n drops -n from the other end
//	                            (PostgreSQL: left('abcde', -2) = 'abc')
//	lpad(s, n[, fill])          VARCHAR: s padded on the left (right) with
//	rpad(s, n[, fill])          fill (default ' ') to n characters, or cut
//	                            to its first n (PostgreSQL: lpad('hi', 5,
//	                            'xy') = 'xyxhi'); n <= 0 gives ''
//	reverse(s)                  VARCHAR, character by character
//	repeat(s, n)                VARCHAR: s n times ('' for n <= 0)
//	starts_with(s, p)           BOOLEAN
//	ends_with(s, p), suffix     BOOLEAN
//	contains(s, sub)            BOOLEAN
//	strlen(s)                   BIGINT: bytes (DuckDB's strlen)
//	concat_ws(sep, a, ...)      VARCHAR: the non-NULL arguments (cast to
//	                            VARCHAR) joined by sep; NULL only when sep is
//	regexp_replace(s, re, r[, flags])
//	                            VARCHAR: the first match replaced (all with
//	                            flag 'g'; 'i' ignores case; 'c' respects it),
//	                            as PostgreSQL and DuckDB. In r, \1..\9 are
//	                            the groups, \0 and & are not special, \\ is a
//	                            backslash
//	regexp_matches(s, re[, flags])
//	                            BOOLEAN: re matches somewhere in s (DuckDB's
//	                            meaning, not PostgreSQL's set of matches)
//
// Regular expressions are RE2 (Go's regexp); a constant pattern is compiled
// once when the call is built, a pattern from a column once per distinct
// value (bounded cache).
func init() {
	str := p(kString)
	pos := func(name string, subFirst bool, aliases ...string) {
		mustAdd(&funcDef{name: name, aliases: aliases, desc: "1-based character position of a substring (0 if absent)",
			sigs: []sig{sg("BIGINT", str, str)}, rule: fixed(tInt64),
			build: func(name string, args []Expr, t arrow.DataType) (Expr, error) {
				return strictCall(name, args, []arrow.DataType{tString, tString}, t, func([]Expr) (rowFn, colFn) {
					return kernel2(func(a, b string) (int64, bool, error) {
						if subFirst {
							a, b = b, a
						}
						i := strings.Index(a, b)
						if i < 0 {
							return 0, true, nil
						}
						return int64(utf8.RuneCountInString(a[:i])) + 1, true, nil
					})
				})
			}})
	}
	pos("position", true)
	pos("strpos", false, "instr")
	for _, n := range []string{"left", "right"} {
		fromLeft := n == "left"
		mustAdd(&funcDef{name: n, desc: "the " + n + "most n characters (negative: all but the other end's -n)",
			sigs: []sig{sg("VARCHAR", str, p(kInt))}, rule: fixed(tString),
			build: func(name string, args []Expr, t arrow.DataType) (Expr, error) {
				return strictCall(name, args, []arrow.DataType{tString, tInt64}, t, func([]Expr) (rowFn, colFn) {
					return kernel2(func(s string, k int64) (string, bool, error) { return leftRight(s, k, fromLeft), true, nil })
				})
			}})
	}
	for _, n := range []string{"lpad", "rpad"} {
		onLeft := n == "lpad"
		mustAdd(&funcDef{name: n, desc: "pad (or cut) a string to n characters with fill (default ' ')",
			sigs: []sig{sgOpt("VARCHAR", 1, str, p(kInt), str)}, rule: fixed(tString),
			build: func(name string, args []Expr, t arrow.DataType) (Expr, error) {
				if len(args) == 2 {
					args = append(args, Lit(" ", tString))
				}
				return strictCall(name, args, []arrow.DataType{tString, tInt64, tString}, t, func([]Expr) (rowFn, colFn) {
					return kernel3(func(s string, k int64, fill string) (string, bool, error) { return pad(name, s, k, fill, onLeft) })
				})
			}})
	}
	mustAdd(&funcDef{name: "reverse", desc: "the characters of a string in reverse order",
		sigs: []sig{sg("VARCHAR", str)}, rule: fixed(tString),
		build: func(name string, args []Expr, t arrow.DataType) (Expr, error) {
			return strictCall(name, args, []arrow.DataType{tString}, t, func([]Expr) (rowFn, colFn) {
				return kernel1(func(s string) (string, bool, error) {
					r := []rune(s)
					for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
						r[i], r[j] = r[j], r[i]
					}
					return string(r), true, nil
				})
			})
		}})
	mustAdd(&funcDef{name: "repeat", desc: "a string repeated n times",
		sigs: []sig{sg("VARCHAR", str, p(kInt))}, rule: fixed(tString),
		build: func(name string, args []Expr, t arrow.DataType) (Expr, error) {
			return strictCall(name, args, []arrow.DataType{tString, tInt64}, t, func([]Expr) (rowFn, colFn) {
				return kernel2(func(s string, k int64) (string, bool, error) {
					if k <= 0 || s == "" {
						return "", true, nil
					}
					if k > maxStringBytes/int64(len(s)) {
						return "", false, fmt.Errorf("%s: the result would exceed %d bytes", name, maxStringBytes)
					}
					return strings.Repeat(s, int(k)), true, nil
				})
			})
		}})
	boolStr := func(name, desc string, f func(s, x string) bool, aliases ...string) {
		mustAdd(&funcDef{name: name, aliases: aliases, desc: desc, sigs: []sig{sg("BOOLEAN", str, str)}, rule: fixed(tBoolean),
			build: func(name string, args []Expr, t arrow.DataType) (Expr, error) {
				return strictCall(name, args, []arrow.DataType{tString, tString}, t, func([]Expr) (rowFn, colFn) {
					return kernel2(func(s, x string) (bool, bool, error) { return f(s, x), true, nil })
				})
			}})
	}
	boolStr("starts_with", "whether s starts with prefix", strings.HasPrefix)
	boolStr("ends_with", "whether s ends with suffix", strings.HasSuffix, "suffix")
	boolStr("contains", "whether s contains sub", strings.Contains)
	mustAdd(&funcDef{name: "strlen", desc: "the length of a string in bytes",
		sigs: []sig{sg("BIGINT", str)}, rule: fixed(tInt64),
		build: func(name string, args []Expr, t arrow.DataType) (Expr, error) {
			return strictCall(name, args, []arrow.DataType{tString}, t, func([]Expr) (rowFn, colFn) {
				return kernel1(func(s string) (int64, bool, error) { return int64(len(s)), true, nil })
			})
		}})
	mustAdd(&funcDef{name: "concat_ws", desc: "the non-NULL arguments joined by a separator",
		sigs: []sig{sgVar("VARCHAR", str, p(kAny))}, rule: fixed(tString), build: buildConcatWS})
	mustAdd(&funcDef{name: "regexp_replace", desc: "replace the first match of a regular expression (all with flag 'g')",
		sigs: []sig{sgOpt("VARCHAR", 1, str, str, str, str)}, rule: fixed(tString), build: buildRegexpReplace})
	mustAdd(&funcDef{name: "regexp_matches", desc: "whether a regular expression matches somewhere in s",
		sigs: []sig{sgOpt("BOOLEAN", 1, str, str, str)}, rule: fixed(tBoolean), build: buildRegexpMatches})
}

var tBoolean = arrow.FixedWidthTypes.Boolean

// maxStringBytes bounds what repeat and lpad/rpad may build from one value.
const maxStringBytes = 1 << 28

func leftRight(s string, k int64, fromLeft bool) string {
	n := int64(utf8.RuneCountInString(s))
	keep := k
	if k < 0 {
		keep = max(n+k, 0)
	}
	if keep >= n {
		return s
	}
	if fromLeft {
		return s[:runeOffset(s, keep)]
	}
	return s[runeOffset(s, n-keep):]
}

// runeOffset is the byte offset of character k (0-based) of s.
func runeOffset(s string, k int64) int {
	for i := range s {
		if k == 0 {
			return i
		}
		k--
	}
	return len(s)
}

func pad(name, s string, k int64, fill string, onLeft bool) (string, bool, error) {
	if k <= 0 {
		return "", true, nil
	}
	n := int64(utf8.RuneCountInString(s))
	if k <= n {
		return s[:runeOffset(s, k)], true, nil
	}
	if fill == "" {
		return s, true, nil
	}
	if k*int64(utf8.UTFMax) > maxStringBytes {
		return "", false, fmt.Errorf("%s: the result would exceed %d bytes", name, maxStringBytes)
	}
	fr := []rune(fill)
	var b strings.Builder
	b.Grow(int(k) * 2)
	if !onLeft {
		b.WriteString(s)
	}
	for i := int64(0); i < k-n; i++ {
		b.WriteRune(fr[i%int64(len(fr))])
	}
	if onLeft {
		b.WriteString(s)
	}
	return b.String(), true, nil
}

// concatWS is concat_ws: not strict (NULL arguments are skipped).
type concatWS struct{ args []Expr }

func buildConcatWS(name string, args []Expr, _ arrow.DataType) (Expr, error) {
	f := &concatWS{}
	for _, a := range args {
		c, err := Coerce(a, tString)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		f.args = append(f.args, c)
	}
	return fold(f, f.args...)
}

func (f *concatWS) Type() arrow.DataType { return tString }
func (f *concatWS) String() string       { return "concat_ws(" + joinExprs(f.args) + ")" }

func (f *concatWS) EvalRow(r exec.Row) (any, error) {
	vals := make([]any, len(f.args))
	for i, a := range f.args {
		v, err := a.EvalRow(r)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	if vals[0] == nil {
		return nil, nil
	}
	var b strings.Builder
	first := true
	for _, v := range vals[1:] {
		if v == nil {
			continue
		}
		if !first {
			b.WriteString(vals[0].(string))
		}
		first = false
		b.WriteString(v.(string))
	}
	return b.String(), nil
}

func (f *concatWS) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	n := int(rec.NumRows())
	ops := make([]operand, 0, len(f.args))
	defer func() {
		for _, o := range ops {
			o.release()
		}
	}()
	for _, a := range f.args {
		o, err := evalOperand(mem, a, rec)
		if err != nil {
			return nil, err
		}
		ops = append(ops, o)
	}
	if ops[0].isNullScalar() {
		return nullArray(mem, tString, n), nil
	}
	// at is argument k of row i, ok=false for NULL.
	at := func(k, i int) (string, bool) {
		o := ops[k]
		if o.arr == nil {
			s, ok := o.scalar.(string)
			return s, ok
		}
		if o.arr.IsNull(i) {
			return "", false
		}
		return o.arr.(*array.String).Value(i), true
	}
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(n)
	var scratch []byte
	for i := 0; i < n; i++ {
		sep, ok := at(0, i)
		if !ok {
			b.AppendNull()
			continue
		}
		scratch = scratch[:0]
		first := true
		for k := 1; k < len(ops); k++ {
			v, ok := at(k, i)
			if !ok {
				continue
			}
			if !first {
				scratch = append(scratch, sep...)
			}
			first = false
			scratch = append(scratch, v...)
		}
		b.BinaryBuilder.Append(scratch)
	}
	return b.NewArray(), nil
}

func regexFlags(name string, flags string) (global bool, prefix string, err error) {
	for _, c := range flags {
		switch c {
		case 'g':
			global = true
		case 'i':
			prefix = "(?i)"
		case 'c':
			prefix = ""
		case 's':
			prefix += "(?s)"
		case 'm', 'n':
			prefix += "(?m)"
		default:
			return false, "", fmt.Errorf("%s: unknown flag %q (g, i, c, s, m, n)", name, c)
		}
	}
	return global, prefix, nil
}

// pgReplacement turns PostgreSQL's replacement syntax (\1 for group 1, \\
// for a backslash) into Go's template ($1, and $ escaped as $$).
func pgReplacement(r string) string {
	var b strings.Builder
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == '$':
			b.WriteString("$$")
		case c == '\\' && i+1 < len(r) && r[i+1] >= '0' && r[i+1] <= '9':
			b.WriteString("${" + string(r[i+1]) + "}")
			i++
		case c == '\\' && i+1 < len(r) && r[i+1] == '\\':
			b.WriteByte('\\')
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func replaceRegex(re *regexp.Regexp, s, tmpl string, global bool) string {
	if global {
		return re.ReplaceAllString(s, tmpl)
	}
	m := re.FindStringSubmatchIndex(s)
	if m == nil {
		return s
	}
	out := re.ExpandString([]byte(s[:m[0]]), tmpl, s, m)
	return string(out) + s[m[1]:]
}

// constPattern compiles a constant pattern (with the flags' prefix) once;
// nil when the pattern is not a constant.
func constPattern(name string, e Expr, prefix string) (*regexp.Regexp, error) {
	l, ok := e.(*Literal)
	if !ok || l.v == nil {
		return nil, nil
	}
	return compileRegexFor(name, prefix+l.v.(string))
}

func constFlags(name string, args []Expr, at int) (string, error) {
	if len(args) <= at {
		return "", nil
	}
	l, ok := args[at].(*Literal)
	if !ok {
		return "", fmt.Errorf("%s: the flags must be a constant", name)
	}
	f, _ := l.v.(string)
	return f, nil
}

func buildRegexpReplace(name string, args []Expr, t arrow.DataType) (Expr, error) {
	flags, err := constFlags(name, args, 3)
	if err != nil {
		return nil, err
	}
	global, prefix, err := regexFlags(name, flags)
	if err != nil {
		return nil, err
	}
	fixedRe, err := constPattern(name, args[1], prefix)
	if err != nil {
		return nil, err
	}
	cache := &regexCache{m: map[string]*regexp.Regexp{}}
	e, err := strictCall(name, args[:3], []arrow.DataType{tString, tString, tString}, t, func([]Expr) (rowFn, colFn) {
		return kernel3(func(s, pat, repl string) (string, bool, error) {
			re := fixedRe
			if re == nil {
				var err error
				if re, err = cache.getFor(name, prefix+pat); err != nil {
					return "", false, err
				}
			}
			return replaceRegex(re, s, pgReplacement(repl), global), true, nil
		})
	})
	return setText(e, name+"("+joinExprs(args)+")"), err
}

func buildRegexpMatches(name string, args []Expr, t arrow.DataType) (Expr, error) {
	flags, err := constFlags(name, args, 2)
	if err != nil {
		return nil, err
	}
	global, prefix, err := regexFlags(name, flags)
	if err != nil {
		return nil, err
	}
	if global {
		return nil, fmt.Errorf("%s: flag 'g' does not apply", name)
	}
	fixedRe, err := constPattern(name, args[1], prefix)
	if err != nil {
		return nil, err
	}
	cache := &regexCache{m: map[string]*regexp.Regexp{}}
	e, err := strictCall(name, args[:2], []arrow.DataType{tString, tString}, t, func([]Expr) (rowFn, colFn) {
		return kernel2(func(s, pat string) (bool, bool, error) {
			re := fixedRe
			if re == nil {
				var err error
				if re, err = cache.getFor(name, prefix+pat); err != nil {
					return false, false, err
				}
			}
			return re.MatchString(s), true, nil
		})
	})
	return setText(e, name+"("+joinExprs(args)+")"), err
}
