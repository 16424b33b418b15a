package main

import (
	"syscall"
	"testing"
	"time"
)

// TestInterruptibleTwice: the first SIGINT ends the run's context alone,
// the second the analysis's too.
func TestInterruptibleTwice(t *testing.T) {
	ctx, analysis, stop := interruptibleTwice()
	defer stop()
	ended := func(what string, c interface{ Err() error }, want bool) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Second)
		for (c.Err() != nil) != want && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if (c.Err() != nil) != want {
			t.Fatalf("%s ended: %v, want %v", what, c.Err() != nil, want)
		}
	}
	ended("run", ctx, false)
	syscall.Kill(syscall.Getpid(), syscall.SIGINT)
	ended("run", ctx, true)
	time.Sleep(50 * time.Millisecond)
	ended("analysis", analysis, false)
	syscall.Kill(syscall.Getpid(), syscall.SIGINT)
	ended("analysis", analysis, true)
}
