package clock

import (
	"testing"
	"time"
)

func TestFromEnv(t *testing.T) {
	t.Parallel()
	c, frozen, err := FromEnv("2026-09-24T08:00:00-03:00")
	if err != nil || !frozen || !c.Now().Equal(time.Date(2026, 9, 24, 11, 0, 0, 0, time.UTC)) {
		t.Fatalf("frozen clock: %v %v %v", c, frozen, err)
	}
	if _, frozen, err := FromEnv(""); err != nil || frozen {
		t.Fatal("empty LASTRO_NOW must mean the system clock")
	}
	if _, _, err := FromEnv("24/09/2026"); err == nil {
		t.Fatal("accepted a non RFC 3339 LASTRO_NOW")
	}
	m := NewManual(time.Unix(0, 0))
	m.Advance(time.Hour)
	if m.Now() != time.Unix(3600, 0) {
		t.Fatal("Advance")
	}
}
