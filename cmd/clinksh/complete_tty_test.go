package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestInteractiveTabCompletion types prefixes and Tab into the real shell
// on a pseudo-terminal (a tmux pane) with the real engine's catalog: a
// keyword, a column after "bid.", a table after FROM; the completed
// statement then runs. Inside a quoted string Tab completes a file of the
// working directory.
func TestInteractiveTabCompletion(t *testing.T) {
	bin := clinkshBinary(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sel_bids.csv"), []byte("a\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	term := startTmux(t, 160, 40,
		"cd "+dir+" && CLINK_HISTORY="+filepath.Join(dir, "hist")+" "+bin+"; sleep 60")
	typeKeys := func(text string) { term.run("send-keys", "-l", text) }
	tab := func() { term.run("send-keys", "Tab") }

	term.waitFor(strings.TrimSpace(prompt))
	typeKeys("SELEC")
	tab()
	term.waitFor(prompt + "SELECT")
	typeKeys(" bid.pri")
	tab()
	term.waitFor(prompt + "SELECT bid.price")
	typeKeys(" FROM bi")
	tab()
	term.waitFor(prompt + "SELECT bid.price FROM bid")
	term.send(" LIMIT 1;")
	p := term.waitFor("1 row")
	if !regexp.MustCompile(`(?m)^\| +price \|$`).MatchString(p) {
		t.Errorf("the completed statement did not print a price column:\n%s", p)
	}

	// Readline inserts a candidate only when it is the only one: were
	// keywords offered inside the quotes too (select), Tab would list them.
	typeKeys("SELECT * FROM 'sel")
	tab()
	term.waitFor(prompt + "SELECT * FROM 'sel_bids.csv")
}
