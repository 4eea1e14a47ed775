package client_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/testcluster"
)

// TestCoalescedCallsAgainstRealProcess has more threads of one client than
// it keeps calls in flight (one read, 16 mutations) make calls that
// coalesce into Batch RPCs to a real service, and checks every answer.
func TestCoalescedCallsAgainstRealProcess(t *testing.T) {
	ctx := context.Background()
	addr := dev(t)
	c, err := client.New(client.Config{Meta: addr, Token: testcluster.AdminToken(t, addr), BatchesInFlight: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const threads, files = 40, 16
	errs := make(chan error, threads)
	for th := range threads {
		go func() {
			errs <- func() error {
				for i := range files {
					p := fmt.Sprintf("/t%d/f%d", th, i)
					if err := c.WriteFile(ctx, p, []byte(p), client.CreateOptions{}); err != nil {
						return err
					}
					st, err := c.Stat(ctx, p)
					if err != nil {
						return err
					}
					if st.Length != uint64(len(p)) || st.Path != p {
						return fmt.Errorf("stat %s: %+v", p, st)
					}
					if _, err := c.Stat(ctx, p+".missing"); !errors.Is(err, fserr.ErrNotFound) {
						return fmt.Errorf("stat of a missing file: %v", err)
					}
					if _, err := c.Rename(ctx, p, p+".renamed"); err != nil {
						return err
					}
					if i%2 == 0 {
						if _, err := c.Delete(ctx, p+".renamed", false); err != nil {
							return err
						}
					}
				}
				return nil
			}()
		}()
	}
	for range threads {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if client.BatchesSent(c) == 0 {
		t.Fatal("no call was coalesced")
	}
	for th := range threads {
		sum, err := c.ContentSummary(ctx, fmt.Sprintf("/t%d", th))
		if err != nil {
			t.Fatal(err)
		}
		if sum.FileCount != files/2 {
			t.Fatalf("/t%d holds %d files, want %d", th, sum.FileCount, files/2)
		}
	}
}
