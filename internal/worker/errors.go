package worker

import (
	"context"
	"errors"

	"google.golang.org/grpc"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/rpcerr"
)

// bucketUnavailable translates a failure of the bucket that may pass (one
// object.IsRetryable says so of, which the retry layer has given up on
// already: throttling, timeouts, 5xx answers, broken connections) into
// fserr.ErrUnavailable, keeping its text as the cause: a client must see
// it as temporary (gRPC UNAVAILABLE, reason UNAVAILABLE), not as an
// internal error. Conditions already stated, and other errors, are
// returned as they are.
func bucketUnavailable(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*fserr.Error](err); ok {
		return err
	}
	if object.IsRetryable(err) {
		return &fserr.Error{Cond: fserr.ErrUnavailable, Msg: "the bucket is unavailable: " + err.Error()}
	}
	return err
}

// serverOptions are the worker's gRPC server options: its handlers' errors
// pass bucketUnavailable, then the calls' interceptors (calls and streams,
// if not nil: metrics and the slow-call log), then the one translation
// into statuses (internal/rpcerr).
func serverOptions(calls grpc.UnaryServerInterceptor, streams grpc.StreamServerInterceptor) []grpc.ServerOption {
	opts := rpcerr.ServerOptions()
	if calls != nil {
		opts = append(opts, grpc.ChainUnaryInterceptor(calls))
	}
	if streams != nil {
		opts = append(opts, grpc.ChainStreamInterceptor(streams))
	}
	return append(opts,
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			resp, err := h(ctx, req)
			return resp, bucketUnavailable(err)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			return bucketUnavailable(h(srv, ss))
		}))
}
