package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/stratafs/strata/internal/object"
)

// CreateMultipart implements object.Store.
func (s *Store) CreateMultipart(ctx context.Context, key string) (object.Upload, error) {
	if err := object.ValidateUpload(key); err != nil {
		return object.Upload{}, object.WrapError(object.OpCreateMultipart, key, err)
	}
	out, err := s.client.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: &s.bucket, Key: s.full(key),
		StorageClass: s.class})
	if err != nil {
		return object.Upload{}, translate(object.OpCreateMultipart, key, err)
	}
	return object.Upload{Key: key, ID: aws.ToString(out.UploadId), Started: responseDate(out.ResultMetadata)}, nil
}

// UploadPart implements object.Store.
func (s *Store) UploadPart(ctx context.Context, u object.Upload, num int, r io.Reader, size int64) (object.Part, error) {
	if err := object.ValidatePart(u.Key, num, size); err != nil {
		return object.Part{}, object.WrapError(object.OpUploadPart, u.Key, err)
	}
	body, opts, err := requestBody(r, size)
	if err != nil {
		return object.Part{}, object.WrapError(object.OpUploadPart, u.Key, err)
	}
	out, err := s.client.UploadPart(ctx, &awss3.UploadPartInput{
		Bucket: &s.bucket, Key: s.full(u.Key), UploadId: &u.ID,
		PartNumber: aws.Int32(int32(num)), Body: body, ContentLength: aws.Int64(size),
	}, opts...)
	if err != nil {
		return object.Part{}, translate(object.OpUploadPart, u.Key, err)
	}
	return object.Part{Num: num, ETag: tagOf(out.ETag), Size: size}, nil
}

// CompleteMultipart implements object.Store. The Info's ModTime is the
// response's Date.
func (s *Store) CompleteMultipart(ctx context.Context, u object.Upload, parts []object.Part) (object.Info, error) {
	done := make([]types.CompletedPart, len(parts))
	var size int64
	for i, p := range parts {
		done[i] = types.CompletedPart{ETag: ifMatch(p.ETag), PartNumber: aws.Int32(int32(p.Num))}
		size += p.Size
	}
	out, err := s.client.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{
		Bucket: &s.bucket, Key: s.full(u.Key), UploadId: &u.ID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done},
	})
	if err != nil {
		return object.Info{}, translate(object.OpCompleteMultipart, u.Key, err)
	}
	return object.Info{Key: u.Key, Size: size, ModTime: responseDate(out.ResultMetadata), ETag: tagOf(out.ETag)}, nil
}

// AbortMultipart implements object.Store.
func (s *Store) AbortMultipart(ctx context.Context, u object.Upload) error {
	_, err := s.client.AbortMultipartUpload(ctx, &awss3.AbortMultipartUploadInput{
		Bucket: &s.bucket, Key: s.full(u.Key), UploadId: &u.ID,
	})
	err = translate(object.OpAbortMultipart, u.Key, err)
	if errors.Is(err, object.ErrNotFound) {
		return nil // already aborted or completed: abort is idempotent
	}
	return err
}

// ListUploads implements object.Store, paging through ListMultipartUploads.
// NB: MinIO lists the uploads of one whole key only, the prefix taken as a
// key: asked for a prefix that can be no key ("" or ending in "/") it fails
// with errors.ErrUnsupported, and asked for "a/b" it lists the uploads of
// "a/b" but not of "a/bc". It is told by the Server header of its answer.
func (s *Store) ListUploads(ctx context.Context, prefix string) ([]object.Upload, error) {
	in := &awss3.ListMultipartUploadsInput{Bucket: &s.bucket, Prefix: aws.String(s.prefix + prefix)}
	var out []object.Upload
	for {
		res, err := s.client.ListMultipartUploads(ctx, in)
		if err != nil {
			return nil, translate(object.OpListUploads, prefix, err)
		}
		if (prefix == "" || object.IsMarker(prefix)) && isMinIO(res.ResultMetadata) {
			return nil, object.WrapError(object.OpListUploads, prefix,
				fmt.Errorf("MinIO lists the uploads of a whole key only: %w", errors.ErrUnsupported))
		}
		for _, up := range res.Uploads {
			out = append(out, object.Upload{Key: strings.TrimPrefix(aws.ToString(up.Key), s.prefix),
				ID: aws.ToString(up.UploadId), Started: aws.ToTime(up.Initiated)})
		}
		if !aws.ToBool(res.IsTruncated) {
			slices.SortFunc(out, object.CompareUploads)
			return out, nil
		}
		in.KeyMarker, in.UploadIdMarker = res.NextKeyMarker, res.NextUploadIdMarker
	}
}
