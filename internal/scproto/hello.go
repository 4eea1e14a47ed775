package scproto

import (
	"crypto/ed25519"
	"errors"
	"fmt"
)

// A hello proves that the worker behind a socket is the worker the
// namespace service lists (WorkerInfo.sc_key): the client sends a nonce,
// the worker signs helloContext and the nonce with its key, the client
// checks the signature. The socket is found by its path, which says
// nothing of whose it is: in a container, or with two workers on one
// machine, the path a worker registered may be another worker's socket.

// helloContext prefixes the nonce in what a worker signs, so that the
// signature is good for nothing else.
const helloContext = "strata-sc-hello\x00"

// MinNonce and MaxNonce bound a hello's nonce.
const MinNonce, MaxNonce = 16, 64

// ErrNonce is a hello whose nonce is out of bounds.
var ErrNonce = fmt.Errorf("scproto: a hello's nonce must be %d to %d bytes", MinNonce, MaxNonce)

// SignHello returns the worker's signature of nonce.
func SignHello(key ed25519.PrivateKey, nonce []byte) ([]byte, error) {
	if len(nonce) < MinNonce || len(nonce) > MaxNonce {
		return nil, ErrNonce
	}
	return ed25519.Sign(key, helloMessage(nonce)), nil
}

// CheckHello reports whether sig is the signature of nonce by the worker
// whose public key is pub.
func CheckHello(pub, nonce, sig []byte) error {
	if len(pub) != ed25519.PublicKeySize {
		return errors.New("the namespace service lists no short-circuit key for it (a worker older than this client)")
	}
	if !ed25519.Verify(ed25519.PublicKey(pub), helloMessage(nonce), sig) {
		return errors.New("its signature does not check with the worker's key")
	}
	return nil
}

func helloMessage(nonce []byte) []byte { return append([]byte(helloContext), nonce...) }
