package clock

import (
	"context"
	"testing"
	"time"
)

func TestFake(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	ctx, cancel := f.WithDeadline(context.Background(), time.Unix(5, 0))
	defer cancel()
	after := f.After(3 * time.Second)
	select {
	case <-after:
		t.Fatal("After fired before the clock moved")
	default:
	}
	f.BlockUntil(1)
	f.Advance(3 * time.Second)
	if at := <-after; !at.Equal(time.Unix(3, 0)) {
		t.Errorf("After fired at %v, want 3s", at)
	}
	if ctx.Err() != nil {
		t.Fatal("the deadline passed early")
	}
	f.Advance(2 * time.Second)
	if ctx.Err() == nil {
		t.Error("the deadline did not end the context")
	}
	if _, c := f.WithDeadline(context.Background(), time.Unix(1, 0)); c == nil {
		t.Error("no cancel")
	}
	if ctx, _ := f.WithDeadline(context.Background(), time.Unix(1, 0)); ctx.Err() == nil {
		t.Error("a deadline already past left the context open")
	}
	select {
	case <-f.After(0):
	default:
		t.Error("After(0) did not fire at once")
	}
}
