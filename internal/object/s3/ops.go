package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/stratafs/strata/internal/object"
)

// listPage is S3's own cap on keys per ListObjectsV2 call.
const listPage = 1000

// Put implements object.Store.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := checkPut(key, size); err != nil {
		return object.WrapError(object.OpPut, key, err)
	}
	body, opts, err := requestBody(r, size)
	if err != nil {
		return object.WrapError(object.OpPut, key, err)
	}
	_, err = s.client.PutObject(ctx, &awss3.PutObjectInput{
		Bucket: &s.bucket, Key: s.full(key), Body: body, ContentLength: aws.Int64(size),
	}, opts...)
	return translate(object.OpPut, key, err)
}

func checkPut(key string, size int64) error {
	if err := object.ValidateKey(key); err != nil {
		return err
	}
	if size < 0 {
		return fmt.Errorf("%w: negative size %d", object.ErrSizeMismatch, size)
	}
	return nil
}

// requestBody prepares a body of exactly size bytes. A seekable body is
// checked up front and signed as usual (the SDK hashes it, then rewinds). A
// stream cannot be hashed before it is sent, so it goes as UNSIGNED-PAYLOAD,
// guarded by SizedReader so a wrong-sized stream never completes a request.
func requestBody(r io.Reader, size int64) (io.Reader, []func(*awss3.Options), error) {
	if rs, ok := r.(io.ReadSeeker); ok {
		if err := checkRemaining(rs, size); err != nil {
			return nil, nil, err
		}
		return rs, nil, nil
	}
	unsigned := awss3.WithAPIOptions(v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware)
	return object.SizedReader(r, size), []func(*awss3.Options){unsigned}, nil
}

func checkRemaining(rs io.ReadSeeker, size int64) error {
	cur, err := rs.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	end, err := rs.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	if _, err := rs.Seek(cur, io.SeekStart); err != nil {
		return err
	}
	if end-cur != size {
		return fmt.Errorf("%w: %d bytes for declared size %d", object.ErrSizeMismatch, end-cur, size)
	}
	return nil
}

// Get implements object.Store.
func (s *Store) Get(ctx context.Context, key string, off, length int64) (io.ReadCloser, error) {
	if err := object.ValidateKey(key); err != nil {
		return nil, object.WrapError(object.OpGet, key, err)
	}
	if off < 0 {
		return nil, object.WrapError(object.OpGet, key, fmt.Errorf("%w: offset %d", object.ErrInvalidRange, off))
	}
	if length == 0 {
		return s.emptyRange(ctx, key, off)
	}
	in := &awss3.GetObjectInput{Bucket: &s.bucket, Key: s.full(key)}
	if off > 0 || length > 0 {
		in.Range = aws.String(byteRange(off, length))
	}
	out, err := s.client.GetObject(ctx, in)
	if err != nil {
		err = translate(object.OpGet, key, err)
		// S3 refuses a range starting at the end (416), which our contract
		// serves as empty, so look closer.
		if errors.Is(err, object.ErrInvalidRange) {
			return s.emptyRange(ctx, key, off)
		}
		return nil, err
	}
	return &body{ctx: ctx, key: key, rc: out.Body}, nil
}

func byteRange(off, length int64) string {
	if length < 0 {
		return "bytes=" + strconv.FormatInt(off, 10) + "-"
	}
	return "bytes=" + strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(off+length-1, 10)
}

// emptyRange serves a zero-length read at off, after checking the object
// exists and off is within it.
func (s *Store) emptyRange(ctx context.Context, key string, off int64) (io.ReadCloser, error) {
	info, err := s.Head(ctx, key)
	if err != nil {
		return nil, object.WrapError(object.OpGet, key, err)
	}
	if _, _, err := object.ClampRange(info.Size, off, 0); err != nil {
		return nil, object.WrapError(object.OpGet, key, err)
	}
	return io.NopCloser(strings.NewReader("")), nil
}

// body translates errors met while streaming a response: a connection cut
// mid-body is transient, unless the caller's context ended it.
type body struct {
	ctx context.Context
	key string
	rc  io.ReadCloser
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err == nil || err == io.EOF {
		return n, err
	}
	if cerr := b.ctx.Err(); cerr != nil {
		return n, object.WrapError(object.OpGet, b.key, fmt.Errorf("%w: %w", cerr, err))
	}
	return n, object.WrapError(object.OpGet, b.key, fmt.Errorf("%w: %w", object.ErrTransient, err))
}

func (b *body) Close() error { return b.rc.Close() }

// Head implements object.Store.
func (s *Store) Head(ctx context.Context, key string) (object.Info, error) {
	if err := object.ValidateKey(key); err != nil {
		return object.Info{}, object.WrapError(object.OpHead, key, err)
	}
	out, err := s.client.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &s.bucket, Key: s.full(key)})
	if err != nil {
		return object.Info{}, translate(object.OpHead, key, err)
	}
	return object.Info{Key: key, Size: aws.ToInt64(out.ContentLength), ModTime: aws.ToTime(out.LastModified)}, nil
}

// List implements object.Store, paging through ListObjectsV2 until limit is
// reached or the listing ends.
func (s *Store) List(ctx context.Context, prefix, startAfter string, limit int) ([]object.Info, error) {
	in := &awss3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: aws.String(s.prefix + prefix)}
	if startAfter != "" {
		in.StartAfter = aws.String(s.prefix + startAfter)
	}
	var out []object.Info
	for {
		page := listPage
		if limit > 0 {
			page = min(page, limit-len(out))
		}
		in.MaxKeys = aws.Int32(int32(page))
		res, err := s.client.ListObjectsV2(ctx, in)
		if err != nil {
			return nil, translate(object.OpList, prefix, err)
		}
		for _, o := range res.Contents {
			key := strings.TrimPrefix(aws.ToString(o.Key), s.prefix)
			out = append(out, object.Info{Key: key, Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)})
		}
		if !aws.ToBool(res.IsTruncated) || (limit > 0 && len(out) >= limit) {
			return out, nil
		}
		in.ContinuationToken = res.NextContinuationToken
	}
}

// Delete implements object.Store. S3 already answers 204 for a missing key.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := object.ValidateKey(key); err != nil {
		return object.WrapError(object.OpDelete, key, err)
	}
	_, err := s.client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: &s.bucket, Key: s.full(key)})
	return translate(object.OpDelete, key, err)
}
