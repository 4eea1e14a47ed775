package s3

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/stratafs/strata/internal/object"
)

// listPage is S3's own cap on keys per ListObjectsV2 call.
const listPage = 1000

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
			out = append(out, s.objectInfo(o))
		}
		if !aws.ToBool(res.IsTruncated) || (limit > 0 && len(out) >= limit) {
			return out, nil
		}
		in.ContinuationToken = res.NextContinuationToken
	}
}

func (s *Store) objectInfo(o types.Object) object.Info {
	return object.Info{Key: strings.TrimPrefix(aws.ToString(o.Key), s.prefix), Size: aws.ToInt64(o.Size),
		ModTime: aws.ToTime(o.LastModified), ETag: tagOf(o.ETag)}
}

// ListDir implements object.Store with ListObjectsV2 and delimiter "/",
// whose continuation token is the page token. It asks again until the page
// is full or the listing ends, since the marker of prefix itself, which S3
// lists, is left out.
func (s *Store) ListDir(ctx context.Context, prefix, token string, limit int) ([]object.Entry, string, error) {
	if limit <= 0 {
		limit = object.DefaultListDirLimit
	}
	in := &awss3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: aws.String(s.prefix + prefix), Delimiter: aws.String("/")}
	if token != "" {
		in.ContinuationToken = aws.String(token)
	}
	var out []object.Entry
	for {
		in.MaxKeys = aws.Int32(int32(min(listPage, limit-len(out))))
		res, err := s.client.ListObjectsV2(ctx, in)
		if err != nil {
			return nil, "", translate(object.OpListDir, prefix, err)
		}
		out = s.mergeEntries(out, prefix, res)
		if !aws.ToBool(res.IsTruncated) {
			return out, "", nil
		}
		if len(out) >= limit {
			return out, aws.ToString(res.NextContinuationToken), nil
		}
		in.ContinuationToken = res.NextContinuationToken
	}
}

// mergeEntries appends to out the objects and common prefixes of one
// response, which are each in key order, merged into one order.
func (s *Store) mergeEntries(out []object.Entry, prefix string, res *awss3.ListObjectsV2Output) []object.Entry {
	objs, pres := res.Contents, res.CommonPrefixes
	for len(objs) > 0 || len(pres) > 0 {
		var e object.Entry
		if len(pres) == 0 || (len(objs) > 0 && aws.ToString(objs[0].Key) < aws.ToString(pres[0].Prefix)) {
			e = object.Entry{Info: s.objectInfo(objs[0])}
			objs = objs[1:]
		} else {
			e = object.Entry{Info: object.Info{Key: strings.TrimPrefix(aws.ToString(pres[0].Prefix), s.prefix)}, Prefix: true}
			pres = pres[1:]
		}
		if e.Key != prefix {
			out = append(out, e)
		}
	}
	return out
}
