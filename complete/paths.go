package complete

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Paths completes a file path: the entries of prefix's directory (relative
// to the working directory) whose names start with its last element,
// directories with a trailing '/'. Each match is the whole path, prefix's
// directory part as typed. Hidden entries show only when the typed name
// starts with '.'. An unreadable directory has no matches.
func Paths(prefix string) []string {
	dir, base := "", prefix
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dir, base = prefix[:i+1], prefix[i+1:]
	}
	read := dir
	if read == "" {
		read = "."
	} else if strings.HasPrefix(read, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			read = filepath.Join(home, read[2:])
		}
	}
	entries, err := os.ReadDir(read)
	if err != nil {
		return []string{}
	}
	out := []string{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		if isDir(filepath.Join(read, name), e) {
			name += "/"
		}
		out = append(out, dir+name)
	}
	sort.Strings(out)
	return out
}

// isDir follows a symlink, so a link to a directory completes as one.
func isDir(path string, e os.DirEntry) bool {
	if e.Type()&os.ModeSymlink == 0 {
		return e.IsDir()
	}
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
