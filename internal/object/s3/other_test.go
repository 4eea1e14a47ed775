package s3_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/objtest"
	"github.com/stratafs/strata/internal/object/s3"
	"github.com/stratafs/strata/internal/object/s3/miniotest"
)

// sdkClient is a plain SDK client of srv: another program using the bucket.
func sdkClient(srv *miniotest.Server) *awss3.Client {
	return awss3.New(awss3.Options{
		BaseEndpoint: aws.String(srv.Endpoint),
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider(miniotest.AccessKey, miniotest.SecretKey, ""),
		UsePathStyle: true,
	})
}

// Objects and markers that another S3 client writes are seen, with the ETag
// that client was given, and a version it replaces is no longer read.
func TestObjectsOfOtherClients(t *testing.T) {
	ctx := context.Background()
	srv := miniotest.Start(t)
	cfg := srv.Config(t)
	cfg.Prefix = "lake"
	st, err := s3.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sdk := sdkClient(srv)
	data := objtest.Data(1, 3000)
	sdkPut := func(key string, body []byte) string {
		out, err := sdk.PutObject(ctx, &awss3.PutObjectInput{Bucket: &cfg.Bucket, Key: aws.String(key), Body: bytes.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Trim(aws.ToString(out.ETag), `"`)
	}
	tag := sdkPut("lake/t/part-0.parquet", data)
	sdkPut("lake/t/_temporary/", nil)
	sdkPut("outside/x", []byte("x"))

	entries, next, err := st.ListDir(ctx, "t/", "", 0)
	if err != nil || next != "" || len(entries) != 2 {
		t.Fatalf("ListDir(t/) = %+v, %q, %v", entries, next, err)
	}
	if e := entries[0]; !e.Prefix || e.Key != "t/_temporary/" {
		t.Fatalf("first entry %+v, want the prefix t/_temporary/", e)
	}
	if e := entries[1]; e.Prefix || e.Key != "t/part-0.parquet" || e.Size != 3000 || e.ETag != tag {
		t.Fatalf("second entry %+v, want the object with ETag %q", e, tag)
	}
	if info, err := st.Head(ctx, "t/_temporary/"); err != nil || info.Size != 0 {
		t.Fatalf("Head of the marker = %+v, %v", info, err)
	}
	rc, err := st.GetVersion(ctx, "t/part-0.parquet", tag, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, data) || rc.Info().ETag != tag {
		t.Fatalf("GetVersion = %d bytes, %+v, %v", len(got), rc.Info(), err)
	}
	if all, err := st.List(ctx, "", "", 0); err != nil || len(all) != 2 {
		t.Fatalf("List of the prefix = %+v, %v; want only the store's two objects", all, err)
	}
	newTag := sdkPut("lake/t/part-0.parquet", objtest.Data(2, 3000))
	if _, err := st.GetVersion(ctx, "t/part-0.parquet", tag, 0, -1); !errors.Is(err, object.ErrChanged) {
		t.Fatalf("GetVersion of the replaced version: %v", err)
	}
	if info, err := st.Head(ctx, "t/part-0.parquet"); err != nil || info.ETag != newTag {
		t.Fatalf("Head after the other client's overwrite = %+v, %v; want ETag %q", info, err, newTag)
	}
}

// Above the single-copy limit Copy goes part by part (UploadPartCopy), all
// parts of one version, and leaves no upload when it fails.
func TestCopyInParts(t *testing.T) {
	ctx := context.Background()
	st := miniotest.Start(t).NewStore(t)
	s3.SetCopyLimits(st, object.MinPartSize, object.MinPartSize)
	data := objtest.Data(3, 2*object.MinPartSize+12345)
	src, err := st.Put(ctx, "big", bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Copy(ctx, "big", src.ETag, "copy")
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != src.Size || !strings.HasSuffix(info.ETag, "-3") {
		t.Fatalf("Copy = %+v, want %d bytes in 3 parts (an ETag ending in -3)", info, src.Size)
	}
	rc, err := st.Get(ctx, "copy", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the copy: %d bytes, %v", len(got), err)
	}
	if _, err := st.Copy(ctx, "big", "stale", "copy2"); !errors.Is(err, object.ErrChanged) {
		t.Fatalf("Copy in parts of a stale version: %v", err)
	}
	ups, err := st.ListUploads(ctx, "copy2")
	if err != nil || len(ups) != 0 {
		t.Fatalf("uploads after a failed copy: %+v, %v", ups, err)
	}
	keys, err := st.List(ctx, "", "", 0)
	if err != nil || !slices.EqualFunc(keys, []string{"big", "copy"}, func(i object.Info, k string) bool { return i.Key == k }) {
		t.Fatalf("List = %+v, %v", keys, err)
	}
}

// A store with a storage class writes its objects in that class, whole and
// in parts, and a class the bucket does not have is refused, clearly.
// (MinIO has STANDARD and REDUCED_REDUNDANCY; S3 STANDARD_IA, GLACIER_IR...)
func TestStorageClass(t *testing.T) {
	ctx := context.Background()
	srv := miniotest.Start(t)
	cfg := srv.Config(t)
	cfg.StorageClass = "REDUCED_REDUNDANCY"
	st, err := s3.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	data := objtest.Data(2, 6<<20)
	if _, err := st.Put(ctx, "whole", bytes.NewReader(data[:100]), 100); err != nil {
		t.Fatal(err)
	}
	if err := object.PutParallel(ctx, st, "parts", bytes.NewReader(data), int64(len(data)),
		object.ParallelOptions{PartSize: 5 << 20}); err != nil {
		t.Fatal(err)
	}
	sdk := sdkClient(srv)
	for _, key := range []string{"whole", "parts"} {
		out, err := sdk.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &cfg.Bucket, Key: aws.String(key)})
		if err != nil || out.StorageClass != "REDUCED_REDUNDANCY" {
			t.Errorf("%s: storage class %q (%v)", key, out.StorageClass, err)
		}
	}
	cfg.StorageClass = "STANDARD_IA"
	ia, err := s3.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ia.Put(ctx, "ia", bytes.NewReader([]byte("x")), 1)
	if err == nil || object.IsRetryable(err) || !strings.Contains(err.Error(), "storage class") {
		t.Fatalf("a class the bucket does not have: %v", err)
	}
	parsed, err := s3.ParseURI("s3://b/p?storage_class=GLACIER_IR&endpoint=http://x")
	if err != nil || parsed.StorageClass != "GLACIER_IR" {
		t.Fatalf("ParseURI: %+v %v", parsed, err)
	}
}
