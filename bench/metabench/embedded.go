package metabench

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"os/user"
	"time"

	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/statemachine"
)

// Embedded is a namespace service member running in this process, served
// over gRPC on a loopback port, with a block-mode "default" namespace. Its
// durability is the real one (the Raft log is fsynced); only the process
// boundary is missing, which is what lets one CPU profile see the client
// and the service together.
type Embedded struct {
	srv   *metaserver.Serving
	token string
}

// StartEmbedded starts a member on dataDir, serving as "strata meta" does
// (gRPC and callwire on one port), over TLS with serverTLS (nil:
// plaintext). The OS user is its superuser, as with "strata meta", and Token
// is a token of that user; noAuth turns authentication off instead
// (--insecure-no-auth). edit, if any, changes the member's configuration
// (its metrics, say) before it starts.
func StartEmbedded(ctx context.Context, dataDir string, noAuth bool, serverTLS *tls.Config, edit ...func(*metaserver.Config)) (*Embedded, error) {
	su := "root"
	if u, err := user.Current(); err == nil {
		su = u.Username
	}
	cfg := metaserver.Config{DataDir: dataDir, Namespace: statemachine.DefaultConfig(su), NoAuth: noAuth,
		TLS: serverTLS, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, e := range edit {
		e(&cfg)
	}
	srv, err := metaserver.Listen(cfg, "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	e := &Embedded{srv: srv}
	if err := srv.ReadyWithDefault(ctx, "file://"+dataDir+"/bucket"); err != nil {
		e.Close()
		return nil, fmt.Errorf("metabench: %w", err)
	}
	if !noAuth {
		if e.token, err = srv.IssueToken(ctx, su, nil, 0); err != nil {
			e.Close()
			return nil, fmt.Errorf("metabench: %w", err)
		}
	}
	return e, nil
}

// Token is the superuser's token ("" with authentication off).
func (e *Embedded) Token() string { return e.token }

// TokenFor returns a token of user, in no groups: a caller that is not the
// superuser, whom the permission checker (and its ACLs) does not let by.
func (e *Embedded) TokenFor(ctx context.Context, user string) (string, error) {
	return e.srv.IssueToken(ctx, user, nil, 0)
}

// Addr is the member's gRPC address, host:port.
func (e *Embedded) Addr() string { return e.srv.Addr }

// closeTimeout bounds how long Close waits for the member to stop.
const closeTimeout = 5 * time.Second

// Close stops serving and closes the member, waiting at most closeTimeout:
// a member that does not stop must not hang the benchmark's exit (NB: one
// did, while raftnode's run loop waited for a Ready channel the raft
// library never closes).
func (e *Embedded) Close() error {
	done := make(chan error, 1)
	go func() { done <- e.srv.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(closeTimeout):
		return fmt.Errorf("metabench: the embedded member did not stop within %s", closeTimeout)
	}
}
