package main

import (
	"context"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// A kernel whose frontend dies shuts down (issue 19): the watcher reports
// the process JPY_PARENT_PID names once it exits, and not before.
func TestWatchParentReportsTheParentsExit(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in parent is a Unix sleep")
	}
	parent := exec.Command("sleep", "60")
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	gone := make(chan string, 1)
	go watchParent(ctx, strconv.Itoa(parent.Process.Pid), 10*time.Millisecond, func(r string) { gone <- r })

	select {
	case r := <-gone:
		t.Fatalf("reported gone while the parent lives: %s", r)
	case <-time.After(200 * time.Millisecond):
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait() // reap it, or it lingers as a zombie that still exists
	select {
	case r := <-gone:
		t.Logf("reported: %s", r)
	case <-time.After(10 * time.Second):
		t.Fatal("the parent's exit was not noticed")
	}
}
