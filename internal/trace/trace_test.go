package trace_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/trace"
)

func TestNewIDsDifferAndPassCheck(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := trace.New()
		if seen[id] {
			t.Fatalf("%s twice", id)
		}
		seen[id] = true
		if err := trace.Check(id); err != nil {
			t.Fatalf("a new id fails the check: %v", err)
		}
	}
}

func TestCheckRefusesWhatALogCouldNotShowAsItIs(t *testing.T) {
	for _, ok := range []string{"", "a", "job-17.attempt_2:map", strings.Repeat("x", trace.MaxLen)} {
		if err := trace.Check(ok); err != nil {
			t.Errorf("Check(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"a b", "a\nb", "é", "a=b", `a"b`, strings.Repeat("x", trace.MaxLen+1), "\x00"} {
		if err := trace.Check(bad); !errors.Is(err, fserr.ErrInvalidArgument) {
			t.Errorf("Check(%q) = %v, want invalid argument", bad, err)
		}
	}
}

func TestContextAndMetadata(t *testing.T) {
	ctx := context.Background()
	if trace.FromContext(ctx) != "" || trace.Outgoing(ctx) != ctx {
		t.Fatal("a context without an id has one")
	}
	ctx, id := trace.Ensure(ctx)
	if again, id2 := trace.Ensure(ctx); id2 != id || again != ctx {
		t.Fatalf("Ensure made a second id %q for %q", id2, id)
	}
	md, _ := metadata.FromOutgoingContext(trace.Outgoing(ctx))
	in := metadata.NewIncomingContext(context.Background(), md)
	if got := trace.Incoming(in); got != id {
		t.Fatalf("through metadata: %q, want %q", got, id)
	}
}
