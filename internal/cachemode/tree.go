package cachemode

import (
	"bytes"
	"context"
	"strings"
	"sync"

	"github.com/stratafs/strata/internal/object"
)

// treeConcurrency bounds the copies or deletes of a directory's objects in
// flight at once.
const treeConcurrency = 16

// eachObject calls fn for every object whose key starts with prefix (the
// prefix's own marker included), treeConcurrency at a time, page by page,
// and logs its progress through large trees.
func (c *call) eachObject(ctx context.Context, p *progress, what, prefix string, fn func(ctx context.Context, info object.Info) error) (int, error) {
	done := 0
	for after := ""; ; {
		page, err := c.store.List(ctx, prefix, after, listPage)
		if err != nil {
			return done, err
		}
		if err := parallel(ctx, page, func(ctx context.Context, info object.Info) error {
			err := fn(ctx, info)
			p.step(what)
			return err
		}); err != nil {
			return done, err
		}
		done += len(page)
		if done >= 10*listPage && done%(10*listPage) < len(page) {
			c.log.Info("cache mode: "+what, "namespace", c.ns.Name, "prefix", prefix, "objects", done)
		}
		if len(page) < listPage {
			return done, nil
		}
		after = page[len(page)-1].Key
	}
}

// deleteTree deletes every object under prefix, its marker included,
// counting them in p.
func (c *call) deleteTree(ctx context.Context, p *progress, prefix string) error {
	_, err := c.eachObject(ctx, p, "deleting", prefix, func(ctx context.Context, info object.Info) error {
		return c.store.Delete(ctx, info.Key)
	})
	if err != nil {
		return err
	}
	return c.store.Delete(ctx, prefix)
}

// moveTree copies every object under from to the same key under to, puts
// to's marker (so that an empty directory moves too), then deletes the
// sources, counting them in p. A failure leaves what was copied: a second
// rename finishes.
func (c *call) moveTree(ctx context.Context, p *progress, from, to string) error {
	_, err := c.eachObject(ctx, p, "copying", from, func(ctx context.Context, info object.Info) error {
		_, err := c.store.Copy(ctx, info.Key, info.ETag, to+strings.TrimPrefix(info.Key, from))
		return err
	})
	if err != nil {
		return err
	}
	if _, err := c.store.Put(ctx, to, bytes.NewReader(nil), 0); err != nil {
		return err
	}
	return c.deleteTree(ctx, p, from)
}

// parallel calls fn for each of infos, treeConcurrency at a time, and
// returns the first failure; after one, the calls not started are not made.
func parallel(ctx context.Context, infos []object.Info, fn func(context.Context, object.Info) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, treeConcurrency)
	var wg sync.WaitGroup
	for _, info := range infos {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := fn(ctx, info); err != nil {
				cancel(err)
			}
		}()
	}
	wg.Wait()
	return context.Cause(ctx)
}
