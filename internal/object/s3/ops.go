package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/stratafs/strata/internal/object"
)

// Put implements object.Store. S3 does not say when it stored the object:
// the Info's ModTime is the response's Date.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64) (object.Info, error) {
	if err := object.ValidatePut(key, size); err != nil {
		return object.Info{}, object.WrapError(object.OpPut, key, err)
	}
	body, opts, err := requestBody(r, size)
	if err != nil {
		return object.Info{}, object.WrapError(object.OpPut, key, err)
	}
	out, err := s.client.PutObject(ctx, &awss3.PutObjectInput{
		Bucket: &s.bucket, Key: s.full(key), Body: body, ContentLength: aws.Int64(size), StorageClass: s.class,
	}, opts...)
	if err != nil {
		return object.Info{}, translate(object.OpPut, key, err)
	}
	return object.Info{Key: key, Size: size, ModTime: responseDate(out.ResultMetadata), ETag: tagOf(out.ETag)}, nil
}

// tagOf strips the quotes S3 puts around ETags (some clones do not), so that
// the tags of Head, List, Get and Put compare equal.
func tagOf(tag *string) string { return strings.Trim(aws.ToString(tag), `"`) }

// ifMatch is the If-Match header value asking for version tag, or nil.
func ifMatch(tag string) *string {
	if tag == "" {
		return nil
	}
	return aws.String(`"` + tag + `"`)
}

// header returns a header of the HTTP response behind md.
func header(md middleware.Metadata, name string) string {
	if raw, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok {
		return raw.Header.Get(name)
	}
	return ""
}

// responseDate is the Date of the response behind md, or now.
func responseDate(md middleware.Metadata) time.Time {
	if t, err := http.ParseTime(header(md, "Date")); err == nil {
		return t
	}
	return time.Now()
}

// isMinIO reports whether the response behind md came from MinIO.
func isMinIO(md middleware.Metadata) bool { return strings.HasPrefix(header(md, "Server"), "MinIO") }

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
func (s *Store) Get(ctx context.Context, key string, off, length int64) (object.Reader, error) {
	return s.GetVersion(ctx, key, "", off, length)
}

// GetVersion implements object.Store with If-Match: S3 answers 412 if the
// object has another ETag.
func (s *Store) GetVersion(ctx context.Context, key, etag string, off, length int64) (object.Reader, error) {
	if err := object.ValidateKey(key); err != nil {
		return nil, object.WrapError(object.OpGet, key, err)
	}
	if off < 0 {
		return nil, object.WrapError(object.OpGet, key, fmt.Errorf("%w: offset %d", object.ErrInvalidRange, off))
	}
	if length == 0 {
		return s.emptyRange(ctx, key, etag, off)
	}
	in := &awss3.GetObjectInput{Bucket: &s.bucket, Key: s.full(key), IfMatch: ifMatch(etag)}
	if off > 0 || length > 0 {
		in.Range = aws.String(byteRange(off, length))
	}
	out, err := s.client.GetObject(ctx, in)
	if err != nil {
		err = versioned(etag, translate(object.OpGet, key, err))
		// S3 refuses a range starting at the end (416), which our contract
		// serves as empty, so look closer.
		if errors.Is(err, object.ErrInvalidRange) {
			return s.emptyRange(ctx, key, etag, off)
		}
		return nil, err
	}
	info := object.Info{Key: key, Size: objectSize(out), ModTime: aws.ToTime(out.LastModified), ETag: tagOf(out.ETag)}
	return &body{ctx: ctx, rc: out.Body, info: info}, nil
}

// versioned is err of a read of version etag: a missing object is a version
// gone.
func versioned(etag string, err error) error {
	if etag != "" && errors.Is(err, object.ErrNotFound) {
		return fmt.Errorf("%w: %w", object.Changed(etag, ""), err)
	}
	return err
}

// objectSize is the whole object's size, from the Content-Range of a ranged
// response ("bytes 0-9/1000") or else its length.
func objectSize(out *awss3.GetObjectOutput) int64 {
	cr := aws.ToString(out.ContentRange)
	if i := strings.LastIndexByte(cr, '/'); i >= 0 {
		if n, err := strconv.ParseInt(cr[i+1:], 10, 64); err == nil {
			return n
		}
	}
	return aws.ToInt64(out.ContentLength)
}

func byteRange(off, length int64) string {
	if length < 0 {
		return "bytes=" + strconv.FormatInt(off, 10) + "-"
	}
	return "bytes=" + strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(off+length-1, 10)
}

// emptyRange serves a zero-length read at off, after checking the object
// exists (of version etag, if not "") and off is within it.
func (s *Store) emptyRange(ctx context.Context, key, etag string, off int64) (object.Reader, error) {
	info, err := s.head(ctx, key, etag)
	if err != nil {
		return nil, object.WrapError(object.OpGet, key, versioned(etag, err))
	}
	if _, _, err := object.ClampRange(info.Size, off, 0); err != nil {
		return nil, object.WrapError(object.OpGet, key, err)
	}
	return &body{ctx: ctx, rc: io.NopCloser(strings.NewReader("")), info: info}, nil
}

// body translates errors met while streaming a response: a connection cut
// mid-body is transient, unless the caller's context ended it.
type body struct {
	ctx  context.Context
	rc   io.ReadCloser
	info object.Info
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err == nil || err == io.EOF {
		return n, err
	}
	if cerr := b.ctx.Err(); cerr != nil {
		return n, object.WrapError(object.OpGet, b.info.Key, fmt.Errorf("%w: %w", cerr, err))
	}
	return n, object.WrapError(object.OpGet, b.info.Key, fmt.Errorf("%w: %w", object.ErrTransient, err))
}

func (b *body) Close() error      { return b.rc.Close() }
func (b *body) Info() object.Info { return b.info }

// Head implements object.Store.
func (s *Store) Head(ctx context.Context, key string) (object.Info, error) {
	return s.head(ctx, key, "")
}

// head is Head of version etag, if not "".
func (s *Store) head(ctx context.Context, key, etag string) (object.Info, error) {
	if err := object.ValidateKey(key); err != nil {
		return object.Info{}, object.WrapError(object.OpHead, key, err)
	}
	out, err := s.client.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &s.bucket, Key: s.full(key), IfMatch: ifMatch(etag)})
	if err != nil {
		return object.Info{}, translate(object.OpHead, key, err)
	}
	return object.Info{Key: key, Size: aws.ToInt64(out.ContentLength), ModTime: aws.ToTime(out.LastModified),
		ETag: tagOf(out.ETag)}, nil
}

// Delete implements object.Store. S3 already answers 204 for a missing key.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := object.ValidateKey(key); err != nil {
		return object.WrapError(object.OpDelete, key, err)
	}
	_, err := s.client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: &s.bucket, Key: s.full(key)})
	return translate(object.OpDelete, key, err)
}
