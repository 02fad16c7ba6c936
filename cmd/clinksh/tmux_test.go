package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tmuxPane runs a command on a real pseudo-terminal, a tmux pane of its
// own server, for the tests that drive the shell as a user would.
type tmuxPane struct {
	t          *testing.T
	tmux, sock string
}

// startTmux starts command in a cols x rows pane; the server goes when the
// test ends.
func startTmux(t *testing.T, cols, rows int, command string) *tmuxPane {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal("this test drives the shell on a pseudo-terminal through tmux: install tmux (Debian: apt-get install tmux)")
	}
	p := &tmuxPane{t: t, tmux: tmux, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	p.run("new-session", "-d", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), command)
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", p.sock, "kill-server").Run() })
	return p
}

// run is one tmux command against the pane's server.
func (p *tmuxPane) run(args ...string) string {
	p.t.Helper()
	out, err := exec.Command(p.tmux, append([]string{"-S", p.sock}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// send types text and Enter.
func (p *tmuxPane) send(text string) {
	p.t.Helper()
	// tmux reads a trailing ';' in an argument as a command separator.
	if strings.HasSuffix(text, ";") {
		text = text[:len(text)-1] + `\;`
	}
	p.run("send-keys", "-l", text)
	p.run("send-keys", "Enter")
}

// waitFor waits until the pane shows what and returns the pane. The
// deadline only bounds a failing run; nothing is timed.
func (p *tmuxPane) waitFor(what string) string {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		text := p.run("capture-pane", "-p", "-S", "-5000")
		if strings.Contains(text, what) {
			return text
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("pane never showed %q:\n%s", what, text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
