package s3

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/stratafs/strata/internal/object"
)

// The SDK's own knowledge of which failures are worth retrying, used here
// only to classify: the retry package decides what to do about them.
var (
	sdkRetryables = retry.IsErrorRetryables(retry.DefaultRetryables)
	sdkThrottles  = retry.IsErrorThrottles(retry.DefaultThrottles)
)

// translate wraps an SDK error for op on key with the object sentinel it
// stands for, keeping the SDK error (status, request id) in the chain.
func translate(op object.Op, key string, err error) error {
	if err == nil {
		return nil
	}
	if s := sentinel(err); s != nil {
		err = fmt.Errorf("%w: %w", s, err)
	}
	return object.WrapError(op, key, err)
}

func sentinel(err error) error {
	// Our own and the caller's errors pass through as they are.
	if errors.Is(err, object.ErrSizeMismatch) || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	code, status := errorCode(err), httpStatus(err)
	switch {
	case code == "NoSuchBucket":
		return nil // a configuration error, not a missing object
	case code == "NoSuchKey" || code == "NoSuchUpload" || code == "NotFound" || status == http.StatusNotFound:
		return object.ErrNotFound
	case code == "PreconditionFailed" || status == http.StatusPreconditionFailed:
		return object.ErrChanged
	case code == "InvalidRange" || status == http.StatusRequestedRangeNotSatisfiable:
		return object.ErrInvalidRange
	case code == "SlowDown" || status == http.StatusTooManyRequests || sdkThrottles.IsErrorThrottle(err) == aws.TrueTernary:
		return object.ErrThrottled
	case code == "RequestTimeout" || status == http.StatusRequestTimeout:
		return object.ErrTimeout
	case status >= 500 || sdkRetryables.IsErrorRetryable(err) == aws.TrueTernary:
		return object.ErrTransient
	}
	return nil
}

func errorCode(err error) string {
	if ae, ok := errors.AsType[smithy.APIError](err); ok {
		return ae.ErrorCode()
	}
	return ""
}

func httpStatus(err error) int {
	if re, ok := errors.AsType[*awshttp.ResponseError](err); ok {
		return re.HTTPStatusCode()
	}
	return 0
}
