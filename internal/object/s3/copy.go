package s3

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/stratafs/strata/internal/object"
)

// S3's limits on copies: one CopyObject copies at most 5 GiB; a larger
// object is copied part by part (UploadPartCopy), copyPartSize a part unless
// MaxParts need larger ones, copyConcurrency parts at once.
const (
	maxCopyObject   = 5 << 30
	copyPartSize    = 512 << 20
	copyConcurrency = 4
)

// copyTries bounds the rounds of an unversioned Copy whose source is
// replaced between its Head and its copy: NB: not a retry of a failure (the
// retry package's job) but the read of a newer version to copy.
const copyTries = 3

// Copy implements object.Store: a Head of src gives its size and version,
// then CopyObject (or, above 5 GiB, a multipart upload of UploadPartCopy
// parts) copies that version only (x-amz-copy-source-if-match), so that
// every part comes from one version and the returned size is the copy's.
func (s *Store) Copy(ctx context.Context, src, srcETag, dst string) (object.Info, error) {
	if err := object.ValidateCopy(src, dst); err != nil {
		return object.Info{}, object.WrapError(object.OpCopy, src, err)
	}
	for try := 1; ; try++ {
		head, err := s.head(ctx, src, srcETag)
		if err != nil {
			return object.Info{}, object.WrapError(object.OpCopy, src, versioned(srcETag, err))
		}
		info, err := s.copyVersion(ctx, src, head, dst)
		if srcETag == "" && errors.Is(err, object.ErrChanged) && try < copyTries {
			continue
		}
		return info, err
	}
}

func (s *Store) copyVersion(ctx context.Context, src string, head object.Info, dst string) (object.Info, error) {
	if head.Size > s.copyLimit {
		return s.copyParts(ctx, src, head, dst)
	}
	out, err := s.client.CopyObject(ctx, &awss3.CopyObjectInput{
		Bucket: &s.bucket, Key: s.full(dst), CopySource: s.copySource(src), CopySourceIfMatch: ifMatch(head.ETag),
	})
	if err != nil {
		return object.Info{}, translate(object.OpCopy, src, err)
	}
	r := out.CopyObjectResult
	return object.Info{Key: dst, Size: head.Size, ModTime: aws.ToTime(r.LastModified), ETag: tagOf(r.ETag)}, nil
}

// copySource names src for x-amz-copy-source: bucket/key, URL-encoded.
func (s *Store) copySource(src string) *string {
	parts := strings.Split(s.prefix+src, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return aws.String(s.bucket + "/" + strings.Join(parts, "/"))
}

// copyParts copies a large object with a multipart upload of copied parts,
// aborted if anything fails.
func (s *Store) copyParts(ctx context.Context, src string, head object.Info, dst string) (object.Info, error) {
	u, err := s.CreateMultipart(ctx, dst)
	if err != nil {
		return object.Info{}, err
	}
	parts, err := s.copyPartsOf(ctx, u, src, head)
	var info object.Info
	if err == nil {
		info, err = s.CompleteMultipart(ctx, u, parts)
	}
	if err != nil {
		return object.Info{}, errors.Join(err, object.AbortUpload(ctx, s, u))
	}
	return info, nil
}

// copyPartsOf copies the parts, copyConcurrency at a time; the first
// failure stops the rest.
func (s *Store) copyPartsOf(ctx context.Context, u object.Upload, src string, head object.Info) ([]object.Part, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	size := max(s.copyPartSize, (head.Size+object.MaxParts-1)/object.MaxParts)
	parts := make([]object.Part, (head.Size+size-1)/size)
	sem := make(chan struct{}, copyConcurrency)
	var wg sync.WaitGroup
	for i := range parts {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			off := int64(i) * size
			p, err := s.copyPart(ctx, u, src, head.ETag, i+1, off, min(size, head.Size-off))
			if err != nil {
				cancel(err)
			}
			parts[i] = p
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return parts, nil
}

func (s *Store) copyPart(ctx context.Context, u object.Upload, src, etag string, num int, off, n int64) (object.Part, error) {
	out, err := s.client.UploadPartCopy(ctx, &awss3.UploadPartCopyInput{
		Bucket: &s.bucket, Key: s.full(u.Key), UploadId: &u.ID, PartNumber: aws.Int32(int32(num)),
		CopySource: s.copySource(src), CopySourceIfMatch: ifMatch(etag),
		CopySourceRange: aws.String("bytes=" + strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(off+n-1, 10)),
	})
	if err != nil {
		return object.Part{}, translate(object.OpCopy, src, err)
	}
	return object.Part{Num: num, ETag: tagOf(out.CopyPartResult.ETag), Size: n}, nil
}
