package localfs_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stratafs/strata/internal/object/localfs"
)

// Puts under a prefix race with Deletes that empty it and prune its
// implied directories: every Put succeeds, whichever directory on its way
// a Delete removed after the Put opened it (the worker's block uploads
// and the block collector's deletes meet so: blocks/<inode>/).
func TestPutsOutliveThePruneOfTheirDirectories(t *testing.T) {
	s, err := localfs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const rounds = 300
	var wg sync.WaitGroup
	errs := make(chan error, 4*rounds)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				key := fmt.Sprintf("blocks/%d/%d/b%d", i%3, w, i)
				if _, err := s.Put(ctx, key, strings.NewReader("x"), 1); err != nil {
					errs <- fmt.Errorf("put %s: %w", key, err)
					return
				}
				if err := s.Delete(ctx, key); err != nil {
					errs <- fmt.Errorf("delete %s: %w", key, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
