// Package statuspage is a process's HTTP listener (--http-listen): its
// Prometheus metrics on /metrics, open to any scraper, /healthz for
// probes, and, on a namespace service member, the status page: /status, a
// page of its own that reloads itself every few seconds (no front-end
// build: one HTML file with its script, embedded), and /api/status, what
// the page shows, as JSON, for a superuser's token only ("Authorization:
// Bearer TOKEN"; the page asks for the token and keeps it in the browser's
// session storage).
//
// The listener is bounded as the gRPC ports are (internal/connlimit: caps
// in all and per address, and a connection that makes no request in time
// is closed), its requests by http.Server's timeouts and header limit, and
// it serves TLS when the service does. Anything but GET or HEAD of a known
// path is answered with a clear status and a line saying why.
//
// It is not an admin API: nothing here changes the cluster.
package statuspage

import (
	"context"
	"crypto/tls"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stratafs/strata/internal/connlimit"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/metrics"
)

// Config configures a process's HTTP listener.
type Config struct {
	// Registry holds the process's metrics, served on /metrics.
	Registry *prometheus.Registry
	// Member, if set, is the namespace service member whose status page
	// this is; a process without one (a worker alone) serves /metrics
	// only.
	Member *metaserver.Member
	// Slow, if set, is the process's log of slow calls, which the page
	// shows.
	Slow *metrics.SlowCalls
	// PeerTLS is how the page asks the other members for their status
	// (tlsconf's client settings; nil: plaintext).
	PeerTLS *tls.Config
	// TLS, if set, is what the listener serves with (the service's own).
	TLS *tls.Config
	// Conns bounds the listener's connections; the zero value: 64 in all,
	// 16 from one address, a first request within 10 s.
	Conns connlimit.Config
	Log   *slog.Logger
}

// Server is a running HTTP listener.
type Server struct {
	cfg   Config
	http  *http.Server
	conns *connlimit.Listener
	peers peers
	Addr  string // where it serves, host:port
}

// The bounds of a request.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = time.Minute
	maxHeaderBytes    = 16 << 10
)

// Serve serves cfg on lis until Close.
func Serve(cfg Config, lis net.Listener) *Server {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	c := cfg.Conns
	c.MaxConns, c.MaxPerAddr = orDefault(c.MaxConns, 64), orDefault(c.MaxPerAddr, 16)
	if c.FirstCall == 0 {
		c.FirstCall = 10 * time.Second
	}
	c.Name, c.Log = "http", cfg.Log
	s := &Server{cfg: cfg, conns: connlimit.Listen(lis, c), Addr: lis.Addr().String()}
	s.peers.tls = cfg.PeerTLS
	s.http = &http.Server{Handler: s.routes(), ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout,
		WriteTimeout: writeTimeout, IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeaderBytes,
		ErrorLog: slog.NewLogLogger(cfg.Log.Handler(), slog.LevelDebug), ConnContext: connContext}
	if cfg.Registry != nil {
		metrics.NewConns(cfg.Registry, "http", s.conns.Stats)
	}
	go func() {
		var err error
		if cfg.TLS != nil {
			s.http.TLSConfig = cfg.TLS.Clone()
			s.http.TLSConfig.NextProtos = []string{"http/1.1"}
			err = s.http.ServeTLS(s.conns, "", "")
		} else {
			err = s.http.Serve(s.conns)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			cfg.Log.Error("http listener stopped", "addr", s.Addr, "err", err)
		}
	}()
	return s
}

func orDefault(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// connContext puts a connection in its requests' contexts, for connlimit
// to find (under TLS, the connection beneath).
func connContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	return connlimit.NewContext(ctx, c)
}

// Close stops serving.
func (s *Server) Close() error {
	s.peers.close()
	return s.http.Close()
}

//go:embed page.html
var page []byte

// routes are the listener's paths.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		// A probe's (Kubernetes'): the process is up and its loop
		// answers. It says nothing else, so it is open to anyone.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	if s.cfg.Registry != nil {
		mux.Handle("/metrics", metrics.Handler(s.cfg.Registry))
	}
	if s.cfg.Member != nil {
		mux.HandleFunc("/status", s.servePage)
		mux.HandleFunc("/api/status", s.serveStatus)
		mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/status", http.StatusFound)
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			refuse(w, http.StatusMethodNotAllowed, "%s: only GET and HEAD are served here", r.Method)
			return
		}
		// A request was made: the connection stays (connlimit).
		connlimit.Authenticated(r.Context())
		if h, pattern := mux.Handler(r); pattern != "" {
			h.ServeHTTP(w, r)
			return
		}
		refuse(w, http.StatusNotFound, "%s: no such page (%s)", r.URL.Path, s.paths())
	})
}

// paths says what the listener serves, for a request of another path.
func (s *Server) paths() string {
	if s.cfg.Member == nil {
		return "this process serves /metrics and /healthz"
	}
	return "this process serves /metrics, /healthz, /status and /api/status"
}

// refuse answers a request with status and a line saying why.
func refuse(w http.ResponseWriter, status int, format string, args ...any) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	fmt.Fprintf(w, format+"\n", args...)
}

// servePage serves the status page itself, which holds no data: its
// script asks /api/status, with the token.
func (s *Server) servePage(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'")
	_, _ = w.Write(page)
}

// authorize returns the token of a request from a superuser, or answers
// it: 401 without a token the service accepts, 403 for another user's.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) (string, bool) {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	tok = strings.TrimSpace(tok)
	err := s.cfg.Member.AuthorizeAdmin(tok)
	switch {
	case err == nil:
		return tok, true
	case errors.Is(err, fserr.ErrPermission):
		refuse(w, http.StatusForbidden, "%v", err)
	case errors.Is(err, fserr.ErrUnauthenticated) && tok == "":
		w.Header().Set("WWW-Authenticate", `Bearer realm="strata"`)
		refuse(w, http.StatusUnauthorized, "a superuser's token is needed: send \"Authorization: Bearer TOKEN\"")
	case errors.Is(err, fserr.ErrUnauthenticated):
		w.Header().Set("WWW-Authenticate", `Bearer realm="strata", error="invalid_token"`)
		refuse(w, http.StatusUnauthorized, "%v", err)
	default:
		refuse(w, http.StatusServiceUnavailable, "%v", err)
	}
	return "", false
}
