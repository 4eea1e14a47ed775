package statuspage

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/client"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Status is what /api/status answers and the page shows.
type Status struct {
	Member        uint64         `json:"member"`
	Cluster       string         `json:"cluster"`
	Version       string         `json:"version"`
	Started       int64          `json:"started"` // milliseconds since the epoch
	Now           int64          `json:"now"`
	Leader        uint64         `json:"leader"`
	Members       []MemberRow    `json:"members"`
	Namespaces    []NamespaceRow `json:"namespaces"`
	Workers       []WorkerRow    `json:"workers"`
	LeaderChanges []LeaderRow    `json:"leaderChanges"`
	SlowCalls     []SlowRow      `json:"slowCalls"`
	SlowThreshold float64        `json:"slowThresholdMs"`
	OpenFiles     uint64         `json:"openFiles"`
	GarbageBlocks uint64         `json:"garbageBlocks"`
	UsageError    string         `json:"usageError,omitempty"`
}

// MemberRow is a member as it answers for itself, and as the leader sees
// it.
type MemberRow struct {
	ID        uint64 `json:"id"`
	Address   string `json:"address"`
	Role      string `json:"role"` // "Leader", "Follower", ... or "" when it did not answer
	Term      uint64 `json:"term"`
	Committed uint64 `json:"committed"`
	Applied   uint64 `json:"applied"`
	Lag       uint64 `json:"lag"` // the leader's commit index less its applied index
	Match     uint64 `json:"match"`
	Progress  string `json:"progress"`
	Answering bool   `json:"answering"`
	Error     string `json:"error,omitempty"`
}

// NamespaceRow is a namespace and what it holds.
type NamespaceRow struct {
	Name        string `json:"name"`
	Mode        string `json:"mode"`
	Bucket      string `json:"bucket"`
	Files       uint64 `json:"files"`
	Directories uint64 `json:"directories"`
	Bytes       uint64 `json:"bytes"`
	InTrash     bool   `json:"inTrash"`
}

// WorkerRow is a live worker and its cache, from its last heartbeat.
type WorkerRow struct {
	ID                string  `json:"id"`
	Address           string  `json:"address"`
	Host              string  `json:"host"`
	Used              uint64  `json:"used"`
	Capacity          uint64  `json:"capacity"`
	HitRatio          float64 `json:"hitRatio"`          // of its reads, those the cache answered (-1: none yet)
	ShortCircuitShare float64 `json:"shortCircuitShare"` // of the bytes read through it, those read short-circuit (-1: none yet)
}

// LeaderRow is a leader change this member saw.
type LeaderRow struct {
	At     int64  `json:"at"`
	Leader uint64 `json:"leader"`
	Term   uint64 `json:"term"`
}

// SlowRow is a slow call this process served.
type SlowRow struct {
	At     int64   `json:"at"`
	Method string  `json:"method"`
	TookMs float64 `json:"tookMs"`
	Class  string  `json:"class"`
	Trace  string  `json:"trace"`
	User   string  `json:"user"`
	Path   string  `json:"path"`
}

// serveStatus answers /api/status for a superuser.
func (s *Server) serveStatus(w http.ResponseWriter, r *http.Request) {
	tok, ok := s.authorize(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	st := s.status(ctx, tok)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(st)
}

// status gathers what the page shows: the member's report, the other
// members' answers (asked with the caller's token), the slow calls.
func (s *Server) status(ctx context.Context, tok string) *Status {
	rep := s.cfg.Member.Report()
	me := rep.Status
	st := &Status{Member: me.GetMemberId(), Cluster: me.GetClusterId(), Version: me.GetVersion(), Now: time.Now().UnixMilli(),
		Leader: me.GetLeaderId()}
	st.Members = s.members(ctx, tok, me)
	if u := rep.Usage; u != nil {
		st.Started, st.OpenFiles, st.GarbageBlocks = u.GetStarted(), u.GetOpenFiles(), u.GetGarbageBlocks()
		st.Namespaces = namespaceRows(u)
	} else if rep.UsageErr != nil {
		st.UsageError = rep.UsageErr.Error()
	}
	st.Workers = workerRows(rep.Workers)
	for _, c := range rep.Leaders {
		st.LeaderChanges = append(st.LeaderChanges, LeaderRow{At: c.At.UnixMilli(), Leader: c.Leader, Term: c.Term})
	}
	if s.cfg.Slow != nil {
		st.SlowThreshold = float64(s.cfg.Slow.Threshold()) / float64(time.Millisecond)
		for _, c := range s.cfg.Slow.Recent() {
			st.SlowCalls = append(st.SlowCalls, SlowRow{At: c.At.UnixMilli(), Method: c.Method,
				TookMs: float64(c.Took) / float64(time.Millisecond), Class: c.Class, Trace: c.Trace, User: c.User, Path: c.Path})
		}
	}
	return st
}

// members are the group's members: each as it answered for itself, with
// what the leader's view (this member's, or the leader's answer) adds.
func (s *Server) members(ctx context.Context, tok string, me *pb.StatusResponse) []MemberRow {
	answers := s.peers.ask(ctx, tok, me)
	var leader *pb.StatusResponse
	for _, a := range answers {
		if a.Err == nil && a.Status.GetRole() == "StateLeader" {
			leader = a.Status
		}
	}
	var rows []MemberRow
	for _, m := range me.GetMembers() {
		row := MemberRow{ID: m.GetId(), Address: m.GetAddress()}
		if i := slices.IndexFunc(answers, func(a client.MemberStatus) bool { return a.Address == m.GetAddress() }); i >= 0 {
			a := answers[i]
			if a.Err != nil {
				row.Error = a.Err.Error()
			} else {
				row.Role, row.Term = strings.TrimPrefix(a.Status.GetRole(), "State"), a.Status.GetTerm()
				row.Committed, row.Applied = a.Status.GetCommittedIndex(), a.Status.GetAppliedIndex()
			}
		}
		if leader != nil {
			if row.Error == "" {
				row.Lag = leader.GetCommittedIndex() - min(row.Applied, leader.GetCommittedIndex())
			}
			if i := slices.IndexFunc(leader.GetMembers(), func(x *pb.Member) bool { return x.GetId() == m.GetId() }); i >= 0 {
				lm := leader.GetMembers()[i]
				row.Match, row.Progress, row.Answering = lm.GetMatchIndex(), lm.GetProgress(), lm.GetAnswering()
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func namespaceRows(u *pb.GetServerStatusResponse) []NamespaceRow {
	var rows []NamespaceRow
	for _, ns := range u.GetNamespaces() {
		info := ns.GetNamespace()
		rows = append(rows, NamespaceRow{Name: info.GetName(),
			Mode:   strings.ToLower(strings.TrimPrefix(info.GetMode().String(), "NAMESPACE_MODE_")),
			Bucket: info.GetStoreUri(), Files: ns.GetFiles(), Directories: ns.GetDirectories(), Bytes: ns.GetLength(),
			InTrash: info.GetDeleted() != 0})
	}
	return rows
}

func workerRows(list []*pb.WorkerInfo) []WorkerRow {
	var rows []WorkerRow
	for _, w := range list {
		st := w.GetStats()
		row := WorkerRow{ID: w.GetId(), Address: w.GetAddress(), Host: w.GetHost(), Used: st.GetUsed(),
			Capacity: st.GetCapacity(), HitRatio: -1, ShortCircuitShare: -1}
		if n := st.GetHits() + st.GetMisses(); n > 0 {
			row.HitRatio = float64(st.GetHits()) / float64(n)
		}
		if n := st.GetShortCircuitBytes() + st.GetRpcBytesRead(); n > 0 {
			row.ShortCircuitShare = float64(st.GetShortCircuitBytes()) / float64(n)
		}
		rows = append(rows, row)
	}
	return rows
}

// peers asks the members for their status, with a client per token (the
// page's callers' tokens, superusers': few), which it keeps.
type peers struct {
	tls *tls.Config
	mu  sync.Mutex
	tok string
	c   *client.Client
}

// askTimeout bounds how long a member may take to answer (one down is
// reported, not waited for).
const askTimeout = time.Second

// ask asks every member me names for its status, with token tok.
func (p *peers) ask(ctx context.Context, tok string, me *pb.StatusResponse) []client.MemberStatus {
	var addrs []string
	for _, m := range me.GetMembers() {
		addrs = append(addrs, m.GetAddress())
	}
	c, err := p.client(tok, strings.Join(addrs, ","))
	if err != nil {
		out := make([]client.MemberStatus, len(addrs))
		for i, a := range addrs {
			out[i] = client.MemberStatus{Address: a, Err: err}
		}
		return out
	}
	return c.MemberStatuses(ctx)
}

func (p *peers) client(tok, meta string) (*client.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.c != nil && p.tok == tok+"@"+meta {
		return p.c, nil
	}
	if p.c != nil {
		p.c.Close()
		p.c = nil
	}
	c, err := client.New(client.Config{Meta: meta, Token: tok, TLS: p.tls, ConnectTimeout: askTimeout,
		RetryTimeout: askTimeout, BatchesInFlight: -1})
	if err != nil {
		return nil, err
	}
	p.tok, p.c = tok+"@"+meta, c
	return c, nil
}

func (p *peers) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.c != nil {
		p.c.Close()
		p.c = nil
	}
}
