package worker

import (
	pb "github.com/stratafs/strata/proto/strata/v1"

	"github.com/stratafs/strata/internal/scproto"
)

// hello answers a short-circuit hello: the worker's id and its signature of
// the client's nonce, by which the client knows that the socket it found
// is this worker's (scproto's hello). It needs no token: it tells nothing
// the service's list of workers does not, and does not count as the
// connection's authenticated request.
func (w *Worker) hello(nonce []byte) *pb.ShortCircuitResponse {
	sig, err := scproto.SignHello(w.scKey, nonce)
	if err != nil {
		return &pb.ShortCircuitResponse{Error: err.Error()}
	}
	return &pb.ShortCircuitResponse{Ok: true, WorkerId: w.id, HelloSignature: sig}
}
