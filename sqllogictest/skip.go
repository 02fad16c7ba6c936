package sqllogictest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// SkipList names records that are known to fail, each with its reason:
//
//	# comment
//	select1.test:1234 correlated subquery in the select list
//	evidence/slt_lang_createview.test:* CREATE VIEW ... AS with DML not supported
//
// A file is matched by its path as given to the runner, or any trailing
// part of it that starts after a '/'. A line entry names a record's
// statement or query line (the line a failure reports); the record is
// still run, and counts as skipped when it fails and as a failure when it
// passes (the entry is stale: remove it). An entry whose line starts no
// record also counts as a failure. A '*' entry skips the whole file
// without running it.
type SkipList struct {
	entries []*SkipEntry
}

// SkipEntry is one line of a skip list.
type SkipEntry struct {
	File   string
	Line   int // 0 for the whole file ('*')
	Reason string
	// Source is where the entry is written ("skips.txt:12").
	Source string
}

// LoadSkipList reads the skip list at path.
func LoadSkipList(path string) (*SkipList, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseSkipList(filepath.Base(path), f)
}

// ParseSkipList parses a skip list; name is used in messages.
func ParseSkipList(name string, r io.Reader) (*SkipList, error) {
	s := &SkipList{}
	sc := bufio.NewScanner(r)
	no := 0
	for sc.Scan() {
		no++
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		where, reason := l, ""
		if i := strings.IndexAny(l, " \t"); i >= 0 {
			where, reason = l[:i], strings.TrimSpace(l[i+1:])
		}
		file, ln, ok := strings.Cut(where, ":")
		if !ok || file == "" {
			return nil, fmt.Errorf("%s:%d: want 'file:line reason' or 'file:* reason', got %q", name, no, l)
		}
		if reason == "" {
			return nil, fmt.Errorf("%s:%d: %s has no reason: say why it is skipped", name, no, where)
		}
		e := &SkipEntry{File: filepath.ToSlash(file), Reason: reason, Source: fmt.Sprintf("%s:%d", name, no)}
		if ln != "*" {
			n, err := strconv.Atoi(ln)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("%s:%d: %q is not a line number or '*'", name, no, ln)
			}
			e.Line = n
		}
		s.entries = append(s.entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// Len is the number of entries.
func (s *SkipList) Len() int {
	if s == nil {
		return 0
	}
	return len(s.entries)
}

// forFile returns the entries that match the file at path.
func (s *SkipList) forFile(path string) []*SkipEntry {
	if s == nil {
		return nil
	}
	p := filepath.ToSlash(path)
	var out []*SkipEntry
	for _, e := range s.entries {
		if p == e.File || strings.HasSuffix(p, "/"+e.File) {
			out = append(out, e)
		}
	}
	return out
}
