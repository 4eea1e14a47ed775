package s3

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/stratafs/strata/internal/object"
)

// CreateMultipart implements object.MultipartStore.
func (s *Store) CreateMultipart(ctx context.Context, key string) (object.Upload, error) {
	if err := object.ValidateKey(key); err != nil {
		return object.Upload{}, object.WrapError(object.OpCreateMultipart, key, err)
	}
	out, err := s.client.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: &s.bucket, Key: s.full(key)})
	if err != nil {
		return object.Upload{}, translate(object.OpCreateMultipart, key, err)
	}
	return object.Upload{Key: key, ID: aws.ToString(out.UploadId)}, nil
}

// UploadPart implements object.MultipartStore.
func (s *Store) UploadPart(ctx context.Context, u object.Upload, num int, r io.Reader, size int64) (object.Part, error) {
	if num < 1 || num > object.MaxParts {
		return object.Part{}, object.WrapError(object.OpUploadPart, u.Key,
			fmt.Errorf("part number %d out of range 1..%d", num, object.MaxParts))
	}
	if err := checkPut(u.Key, size); err != nil {
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
	return object.Part{Num: num, ETag: aws.ToString(out.ETag), Size: size}, nil
}

// CompleteMultipart implements object.MultipartStore.
func (s *Store) CompleteMultipart(ctx context.Context, u object.Upload, parts []object.Part) error {
	done := make([]types.CompletedPart, len(parts))
	for i, p := range parts {
		done[i] = types.CompletedPart{ETag: aws.String(p.ETag), PartNumber: aws.Int32(int32(p.Num))}
	}
	_, err := s.client.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{
		Bucket: &s.bucket, Key: s.full(u.Key), UploadId: &u.ID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done},
	})
	return translate(object.OpCompleteMultipart, u.Key, err)
}

// AbortMultipart implements object.MultipartStore.
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
