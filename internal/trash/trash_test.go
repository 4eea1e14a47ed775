package trash

import (
	"slices"
	"testing"
	"time"
)

func TestPaths(t *testing.T) {
	if got := Root("alice"); got != "/user/alice/.Trash" {
		t.Fatalf("root %q", got)
	}
	if got := Target("alice", "/data/x"); got != "/user/alice/.Trash/Current/data/x" {
		t.Fatalf("target %q", got)
	}
	for _, tc := range []struct {
		p              string
		within, stores bool
	}{
		{"/", false, true},
		{"/user", false, true},
		{"/user/alice", false, true},
		{"/user/alice/.Trash", true, false},
		{"/user/alice/.Trash/Current/x", true, false},
		{"/user/alice/.Trashy", false, false},
		{"/user/alic", false, false},
		{"/user/alice/data", false, false},
		{"/user/bob/.Trash", false, false},
	} {
		if Within(tc.p, "alice") != tc.within || Contains(tc.p, "alice") != tc.stores {
			t.Errorf("%s: within %v, contains %v", tc.p, Within(tc.p, "alice"), Contains(tc.p, "alice"))
		}
	}
}

func TestCheckpoints(t *testing.T) {
	at := time.Date(2026, 11, 26, 11, 38, 5, 0, time.UTC)
	if got := CheckpointName(at, 0); got != "261126113805" {
		t.Fatalf("name %q", got)
	}
	if got := CheckpointName(at.In(time.FixedZone("x", 3600)), 2); got != "261126113805-2" {
		t.Fatalf("name %q", got)
	}
	for _, name := range []string{"261126113805", "261126113805-2"} {
		if got, ok := CheckpointTime(name); !ok || !got.Equal(at) {
			t.Errorf("%s: %v %v", name, got, ok)
		}
	}
	for _, name := range []string{"Current", "26112611380", "261126113805-", "261126113805-0", "261126113805-x", "x-1"} {
		if _, ok := CheckpointTime(name); ok {
			t.Errorf("%s parsed as a checkpoint", name)
		}
	}
	names := []string{"Current", "junk", CheckpointName(at.Add(-25*time.Hour), 0), CheckpointName(at.Add(-24*time.Hour), 1),
		CheckpointName(at.Add(-time.Hour), 0)}
	got := Expired(names, at, 24*time.Hour)
	if !slices.Equal(got, names[2:3]) {
		t.Fatalf("expired %v", got)
	}
}
