// Package s3 is the object.Store for S3 and S3-compatible stores
// (MinIO, OSS, Ceph RGW, AWS), on aws-sdk-go-v2.
//
// It is configured for compatibility rather than for AWS alone: path-style
// addressing, and request checksums computed and response checksums validated
// only "when required", since the SDK's default trailing checksums are not
// understood by every S3 clone. The SDK's own retryer is disabled (one
// attempt per call): retries live in the retry package and nowhere else.
// Errors are translated to the object sentinels here, once.
//
// It is not a bucket administration tool beyond CreateBucket for tests and
// dev setups.
package s3

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/stratafs/strata/internal/object"
)

// defaultRegion is used when neither Config nor the environment names one;
// MinIO and most S3 clones accept it whatever their own region is.
const defaultRegion = "us-east-1"

// Config says where the bucket is and how to reach it. Empty fields fall back
// to the SDK's usual chain: AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID /
// AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, shared config files, and so on.
type Config struct {
	Bucket string
	// Prefix is prepended to every key, so a store can own a "directory" of
	// a shared bucket. A missing trailing "/" is added.
	Prefix string
	// Endpoint is the service URL, e.g. http://127.0.0.1:9000.
	Endpoint string
	Region   string
	// Static credentials; all empty means the SDK's default chain.
	AccessKeyID, SecretAccessKey, SessionToken string
	// VirtualHosted selects bucket.host addressing instead of the default
	// path style, which MinIO, Ceph and loopback endpoints need.
	VirtualHosted bool
	// StorageClass is the storage class of the objects the store writes
	// (Put, CreateMultipart): STANDARD_IA, GLACIER_IR...; empty is the
	// bucket's default. A store that has no such class refuses the write.
	StorageClass string
}

// ParseURI parses s3://bucket/prefix, with optional query parameters
// endpoint, region and storage_class (credentials are never taken from a
// URI).
func ParseURI(uri string) (Config, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return Config{}, fmt.Errorf("s3: %w", err)
	}
	if u.Scheme != "s3" || u.Host == "" || u.User != nil {
		return Config{}, fmt.Errorf("s3: %q is not s3://bucket[/prefix] without credentials", uri)
	}
	q := u.Query()
	for k := range q {
		if k != "endpoint" && k != "region" && k != StorageClassParam {
			return Config{}, fmt.Errorf("s3: unknown parameter %q in %q", k, uri)
		}
	}
	return Config{
		Bucket:       u.Host,
		Prefix:       strings.TrimPrefix(u.Path, "/"),
		Endpoint:     q.Get("endpoint"),
		Region:       q.Get("region"),
		StorageClass: q.Get(StorageClassParam),
	}, nil
}

// StorageClassParam is the query parameter of an s3:// URI that names the
// storage class of what the store writes.
const StorageClassParam = "storage_class"

// Store is an object.Store over one bucket (and prefix).
type Store struct {
	client *awss3.Client
	bucket string
	prefix string // "" or ends in "/"
	class  types.StorageClass
	// Copies above copyLimit bytes go part by part, copyPartSize a part:
	// maxCopyObject and copyPartSize but in tests.
	copyLimit, copyPartSize int64
}

var _ object.Store = (*Store)(nil)

// New returns a store for cfg. It does not contact the service.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("s3: no bucket")
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, loadOptions(cfg)...)
	if err != nil {
		return nil, fmt.Errorf("s3: loading SDK config: %w", err)
	}
	if awsCfg.Region == "" {
		awsCfg.Region = defaultRegion
	}
	client := awss3.NewFromConfig(awsCfg, func(o *awss3.Options) {
		o.UsePathStyle = !cfg.VirtualHosted
	})
	prefix := cfg.Prefix
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return &Store{client: client, bucket: cfg.Bucket, prefix: prefix, class: types.StorageClass(cfg.StorageClass),
		copyLimit: maxCopyObject, copyPartSize: copyPartSize}, nil
}

func loadOptions(cfg Config) []func(*config.LoadOptions) error {
	opts := []func(*config.LoadOptions) error{
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
		// The retry package is the one layer that retries; the SDK's retryer
		// would multiply attempts and hide throttling from it.
		config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }),
	}
	if cfg.Endpoint != "" {
		opts = append(opts, config.WithBaseEndpoint(cfg.Endpoint))
	}
	if cfg.Region != "" {
		opts = append(opts, config.WithRegion(cfg.Region))
	}
	if cfg.AccessKeyID != "" || cfg.SecretAccessKey != "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(
			cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)))
	}
	return opts
}

// Open is ParseURI followed by New.
func Open(ctx context.Context, uri string) (*Store, error) {
	cfg, err := ParseURI(uri)
	if err != nil {
		return nil, err
	}
	return New(ctx, cfg)
}

// CreateBucket creates the store's bucket; one that exists and is ours is
// not an error. For tests and dev setups.
func (s *Store) CreateBucket(ctx context.Context) error {
	_, err := s.client.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: &s.bucket})
	if code := errorCode(err); code == "BucketAlreadyOwnedByYou" {
		return nil
	}
	return translate(object.Op("create-bucket"), s.bucket, err)
}

// full maps a key to the bucket's key.
func (s *Store) full(key string) *string { return aws.String(s.prefix + key) }
