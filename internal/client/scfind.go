package client

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	"github.com/stratafs/strata/internal/scproto"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Which worker's socket a client may use goes by proof, not by host name:
// a client in a container has a host name (and a network) of its own, and
// would never match its worker's, while two workers on one machine, or a
// path shared into a container, may put another worker's socket at the
// path a worker registered. So the client looks for each worker's socket
// (in Config.ShortCircuitDir by its name, else at its path), sends it a
// hello with a nonce, and uses it only if the worker that answers has the
// id the service lists and signs the nonce with the key the service lists
// for it (scproto's hello). The answer holds for workerListTTL, as the
// list that named the worker does: local is asked on every read.

// scFound is what the client found at a worker's socket, and when.
type scFound struct {
	key  string // the worker's key it was proved with
	path string
	err  error // nil: the worker proved itself there
	at   time.Time
}

// helloTimeout bounds a hello: a worker's socket answers at once or not
// at all.
const helloTimeout = 2 * time.Second

// local reports whether the client reads and writes w's blocks
// short-circuit: short-circuit is on and w proved itself at its socket.
func (ws *workerSet) local(w *pb.WorkerInfo) bool {
	if ws.c.cfg.NoShortCircuit || w.UnixSocket == "" {
		return false
	}
	path := ws.socket(w)
	ws.mu.Lock()
	f, ok := ws.mu.sockets[w.Id]
	ws.mu.Unlock()
	if ok && f.key == string(w.ScKey) && f.path == path && time.Since(f.at) < workerListTTL {
		return f.err == nil
	}
	err := ws.prove(path, w)
	ws.mu.Lock()
	if ws.mu.sockets == nil {
		ws.mu.sockets = map[string]scFound{}
	}
	ws.mu.sockets[w.Id] = scFound{key: string(w.ScKey), path: path, err: err, at: time.Now()}
	ws.mu.Unlock()
	if err != nil {
		ws.whyNot(w, path, err)
	}
	return err == nil
}

// socket returns where the client looks for w's socket.
func (ws *workerSet) socket(w *pb.WorkerInfo) string {
	if dir := ws.c.cfg.ShortCircuitDir; dir != "" {
		return filepath.Join(dir, filepath.Base(w.UnixSocket))
	}
	return w.UnixSocket
}

// errNoSocket is a worker whose socket the client cannot see: a worker on
// another machine, or one whose socket directory is not shared with it.
var errNoSocket = errors.New("no socket there")

// prove says hello to the socket at path and checks that w answers; the
// connection then joins the socket's pool.
func (ws *workerSet) prove(path string, w *pb.WorkerInfo) error {
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if errors.Is(err, fs.ErrNotExist) {
		return errNoSocket
	}
	if err != nil {
		return err
	}
	nonce := make([]byte, 32)
	_, _ = rand.Read(nonce)
	resp := &pb.ShortCircuitResponse{}
	_ = conn.SetDeadline(time.Now().Add(helloTimeout))
	err = scproto.Write(conn, &pb.ShortCircuitRequest{Hello: nonce}, nil)
	if err == nil {
		err = scproto.Read(conn, resp)
	}
	switch {
	case err != nil:
	case !resp.Ok:
		err = fmt.Errorf("its worker refused the hello: %s (a worker older than this client?)", resp.Error)
	case resp.WorkerId != w.Id:
		err = fmt.Errorf("the socket there is worker %s's", resp.WorkerId)
	default:
		err = scproto.CheckHello(w.ScKey, nonce, resp.HelloSignature)
	}
	if err != nil {
		conn.Close()
		return err
	}
	_ = conn.SetDeadline(time.Time{})
	ws.scPool(path).put(conn)
	return nil
}

// whyNot logs, once per worker and socket path, why the client does not
// read from w short-circuit. A socket not there is logged once for the
// client, naming the first worker: every worker of another machine has
// none, and that is no news, but a client in a container whose workers'
// sockets were never shared with it would otherwise read everything over
// the network without a word (seed 003).
func (ws *workerSet) whyNot(w *pb.WorkerInfo, path string, err error) {
	key := w.Id + "\x00" + path
	if errors.Is(err, errNoSocket) {
		key = "no socket"
	}
	ws.mu.Lock()
	if ws.mu.told == nil {
		ws.mu.told = map[string]bool{}
	}
	told := ws.mu.told[key]
	ws.mu.told[key] = true
	ws.mu.Unlock()
	if told {
		return
	}
	log := ws.c.cfg.Log
	if log == nil {
		log = slog.Default()
	}
	if errors.Is(err, errNoSocket) {
		log.Info("strata: reading over the network from workers whose short-circuit socket this client cannot see "+
			"(set the client's short-circuit directory, STRATA_SC_DIR or fs.strata.shortcircuit.dir, to where the workers' sockets are shared)",
			"worker", w.Id, "address", w.Address, "socket", path)
		return
	}
	log.Warn("strata: no short-circuit to a worker whose socket this client found; reading over the network",
		"worker", w.Id, "address", w.Address, "socket", path, "why", err.Error())
}
