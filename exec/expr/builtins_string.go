package expr

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/apache/arrow-go/v18/arrow"
)

var (
	tString = arrow.BinaryTypes.String
	tInt64  = arrow.PrimitiveTypes.Int64
	tInt32  = arrow.PrimitiveTypes.Int32
	tDouble = arrow.PrimitiveTypes.Float64
)

// String built-ins. All are strict (NULL in, NULL out) unless noted.
//
//	lower(s), upper(s)                  Unicode case mapping
//	length(s), char_length(s)           characters, not bytes
//	substring(s, start[, len])          see funcs.go
//	concat(a, ...)                      NULL if any argument is NULL
//	trim(s[, chars]), ltrim, rtrim      strip the characters of chars (default
//	                                    ' ', as SQL TRIM; not all whitespace).
//	                                    The parser does not read TRIM(BOTH 'x'
//	                                    FROM s): write trim(s, 'x')
//	replace(s, from, to)                every occurrence; from = '' inserts to
//	                                    between characters (as Java's replace)
//	split_index(s, delim, i)            the i-th (0-based) field of s split at
//	                                    delim; NULL when i < 0, out of range, or
//	                                    s = ''; delim = '' splits at each
//	                                    whitespace character (as Flink)
//	regexp_extract(s, re[, g])          group g (default 0: the whole match) of
//	                                    the first match; NULL when nothing
//	                                    matches, g exceeds the groups, or group
//	                                    g did not take part in the match
//	parse_json(s)                       s checked to be one JSON document and
//	                                    labelled JSON (arrow.json over utf8);
//	                                    invalid JSON is an error
//
// Regular expressions are Go's RE2 syntax, which covers most of Java's
// (Flink's) syntax: classes, quantifiers, groups, (?i) flags, \Q..\E, named
// groups (?P<n>..) and (?<n>..). Not supported, and a clear error when the
// pattern is compiled: backreferences (\1), lookahead and lookbehind
// ((?=..), (?!..), (?<=..)), possessive quantifiers (a*+) and atomic groups.
// Java's POSIX classes \p{Alpha} are written [[:alpha:]] in RE2. A constant
// pattern is compiled once, when the query is planned (an invalid constant
// pattern is a planning error; Flink returns NULL); a pattern from a column
// is compiled per distinct value, with a small cache.
func init() {
	str := p(kString)
	for _, n := range []string{"lower", "upper"} {
		mustAdd(&funcDef{name: n, desc: n + "-case a string (Unicode)", sigs: []sig{sg("VARCHAR", str)}, rule: fixed(tString),
			build: func(name string, args []Expr, _ arrow.DataType) (Expr, error) {
				a, err := Coerce(args[0], tString)
				if err != nil {
					return nil, err
				}
				return fold(&caseFunc{name: name, e: a}, a)
			}})
	}
	mustAdd(&funcDef{name: "char_length", aliases: []string{"length", "character_length"}, desc: "number of characters (not bytes) in a string",
		sigs: []sig{sg("INT", str)}, rule: fixed(tInt32),
		build: func(name string, args []Expr, _ arrow.DataType) (Expr, error) {
			a, err := Coerce(args[0], tString)
			if err != nil {
				return nil, err
			}
			return fold(&lengthFunc{name: name, e: a}, a)
		}})
	mustAdd(&funcDef{name: "substring", aliases: []string{"substr"}, desc: "characters from a 1-based position, optionally at most len of them",
		sigs: []sig{sgOpt("VARCHAR", 1, str, p(kInt), p(kInt))}, rule: fixed(tString),
		build: func(name string, args []Expr, _ arrow.DataType) (Expr, error) {
			s, err := Coerce(args[0], tString)
			if err != nil {
				return nil, err
			}
			f := &substrFunc{name: name, s: s}
			for _, a := range args[1:] {
				c, err := Coerce(a, tInt64)
				if err != nil {
					return nil, err
				}
				f.args = append(f.args, c)
			}
			return fold(f, append([]Expr{s}, f.args...)...)
		}})
	mustAdd(&funcDef{name: "concat", desc: "concatenation of the arguments as strings; NULL if any is NULL",
		sigs: []sig{sgVar("VARCHAR", p(kAny))}, rule: fixed(tString),
		build: func(name string, args []Expr, _ arrow.DataType) (Expr, error) {
			f := &concatFunc{}
			for _, a := range args {
				c, err := Coerce(a, tString)
				if err != nil {
					return nil, fmt.Errorf("concat: %w", err)
				}
				f.args = append(f.args, c)
			}
			return fold(f, f.args...)
		}})
	for _, n := range []string{"trim", "ltrim", "rtrim"} {
		side := map[string]string{"trim": "both ends", "ltrim": "the start", "rtrim": "the end"}[n]
		mustAdd(&funcDef{name: n, desc: "strip spaces (or the characters of chars) from " + side + " of a string",
			sigs: []sig{sgOpt("VARCHAR", 1, str, str)}, rule: fixed(tString), build: buildTrim})
	}
	mustAdd(&funcDef{name: "replace", desc: "replace every occurrence of from by to",
		sigs: []sig{sg("VARCHAR", str, str, str)}, rule: fixed(tString),
		build: func(name string, args []Expr, t arrow.DataType) (Expr, error) {
			return strictCall(name, args, []arrow.DataType{tString, tString, tString}, t,
				func(args []Expr) (rowFn, colFn) {
					return kernel3(func(s, from, to string) (string, bool, error) {
						return strings.ReplaceAll(s, from, to), true, nil
					})
				})
		}})
	mustAdd(&funcDef{name: "split_index", desc: "the index-th (0-based) field of s split at delim; NULL when out of range",
		sigs: []sig{sg("VARCHAR", str, str, p(kInt))}, rule: fixed(tString),
		build: func(name string, args []Expr, t arrow.DataType) (Expr, error) {
			return strictCall(name, args, []arrow.DataType{tString, tString, tInt64}, t,
				func(args []Expr) (rowFn, colFn) { return kernel3(splitIndex) })
		}})
	mustAdd(&funcDef{name: "regexp_extract", desc: "group g (default 0, the whole match) of the first match of a regular expression",
		sigs: []sig{sgOpt("VARCHAR", 1, str, str, p(kInt))}, rule: fixed(tString), build: buildRegexpExtract})
	mustAdd(&funcDef{name: "parse_json", desc: "a string checked to be JSON, typed JSON (arrow.json over utf8)",
		sigs: []sig{sg("JSON", str)}, rule: fixed(JSONType),
		build: func(name string, args []Expr, t arrow.DataType) (Expr, error) {
			return strictCall(name, args, []arrow.DataType{tString}, t,
				func(args []Expr) (rowFn, colFn) {
					return kernel1(func(s string) (string, bool, error) {
						if !json.Valid([]byte(s)) {
							return "", false, fmt.Errorf("parse_json: invalid JSON text %s", sqlLiteral(truncateText(s), tString))
						}
						return s, true, nil
					})
				})
		}})
}

func truncateText(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// strictCall coerces args to the kernel's parameter types and builds a
// strict call of result type t.
func strictCall(name string, args []Expr, types []arrow.DataType, t arrow.DataType, kern func(args []Expr) (rowFn, colFn)) (Expr, error) {
	cargs := make([]Expr, len(args))
	for i, a := range args {
		c, err := Coerce(a, types[i])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		cargs[i] = c
	}
	row, col := kern(cargs)
	return newCall(name, cargs, t, row, col)
}

func buildTrim(name string, args []Expr, t arrow.DataType) (Expr, error) {
	trim := map[string]func(string, string) string{"trim": strings.Trim, "ltrim": strings.TrimLeft, "rtrim": strings.TrimRight}[name]
	if len(args) == 1 {
		return strictCall(name, args, []arrow.DataType{tString}, t, func([]Expr) (rowFn, colFn) {
			return kernel1(func(s string) (string, bool, error) { return trim(s, " "), true, nil })
		})
	}
	return strictCall(name, args, []arrow.DataType{tString, tString}, t, func([]Expr) (rowFn, colFn) {
		return kernel2(func(s, chars string) (string, bool, error) { return trim(s, chars), true, nil })
	})
}

// splitIndex is Flink's SPLIT_INDEX (commons-lang splitByWholeSeparator
// PreserveAllTokens): empty fields count, s = ” has no fields.
func splitIndex(s, delim string, idx int64) (string, bool, error) {
	if idx < 0 || s == "" {
		return "", false, nil
	}
	if delim == "" {
		// Preserve all tokens: every whitespace character separates.
		k := int64(0)
		start := 0
		for i, r := range s {
			if unicode.IsSpace(r) {
				if k == idx {
					return s[start:i], true, nil
				}
				k++
				start = i + len(string(r))
			}
		}
		if k == idx {
			return s[start:], true, nil
		}
		return "", false, nil
	}
	for k := int64(0); ; k++ {
		i := strings.Index(s, delim)
		if k == idx {
			if i < 0 {
				return s, true, nil
			}
			return s[:i], true, nil
		}
		if i < 0 {
			return "", false, nil
		}
		s = s[i+len(delim):]
	}
}

// regexCache compiles non-constant patterns once per distinct value; it is
// shared by parallel subtasks, hence the lock, and bounded.
type regexCache struct {
	mu sync.Mutex
	m  map[string]*regexp.Regexp
}

func (c *regexCache) get(pat string) (*regexp.Regexp, error) {
	return c.getFor("regexp_extract", pat)
}

// getFor compiles pat for the function name (named in the error).
func (c *regexCache) getFor(name, pat string) (*regexp.Regexp, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if re, ok := c.m[pat]; ok {
		return re, nil
	}
	re, err := compileRegexFor(name, pat)
	if err != nil {
		return nil, err
	}
	if len(c.m) >= 256 {
		clear(c.m)
	}
	c.m[pat] = re
	return re, nil
}

func compileRegex(pat string) (*regexp.Regexp, error) { return compileRegexFor("regexp_extract", pat) }

func compileRegexFor(name, pat string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, fmt.Errorf("%s: invalid regular expression %s: %v (RE2 syntax: no backreferences or lookaround)", name, sqlLiteral(pat, tString), err)
	}
	return re, nil
}

func extract(re *regexp.Regexp, s string, g int64) (string, bool, error) {
	if g < 0 || g > int64(re.NumSubexp()) {
		return "", false, nil
	}
	m := re.FindStringSubmatchIndex(s)
	if m == nil || m[2*g] < 0 {
		return "", false, nil
	}
	return s[m[2*g]:m[2*g+1]], true, nil
}

func buildRegexpExtract(name string, args []Expr, t arrow.DataType) (Expr, error) {
	types := []arrow.DataType{tString, tString, tInt64}[:len(args)]
	if len(args) == 2 {
		// The default group 0 as an explicit constant: one kernel shape.
		args = append(args, Lit(int64(0), tInt64))
		types = append(types, tInt64)
	}
	var fixedRe *regexp.Regexp
	if l, ok := args[1].(*Literal); ok && l.v != nil {
		pat, ok := l.v.(string)
		if !ok {
			return nil, fmt.Errorf("regexp_extract: pattern must be VARCHAR")
		}
		var err error
		if fixedRe, err = compileRegex(pat); err != nil {
			return nil, err
		}
	}
	cache := &regexCache{m: map[string]*regexp.Regexp{}}
	e, err := strictCall(name, args, types, t, func([]Expr) (rowFn, colFn) {
		return kernel3(func(s, pat string, g int64) (string, bool, error) {
			re := fixedRe
			if re == nil {
				var err error
				if re, err = cache.get(pat); err != nil {
					return "", false, err
				}
			}
			return extract(re, s, g)
		})
	})
	if c, ok := e.(*call); ok && len(c.args) == 3 {
		if l, ok := c.args[2].(*Literal); ok && l.v == int64(0) && l.text == "" {
			c.str = func() string { return name + "(" + joinExprs(c.args[:2]) + ")" }
		}
	}
	return e, err
}
