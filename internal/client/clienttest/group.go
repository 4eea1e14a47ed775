package clienttest

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Bound is how long a script's wait may last: a bound for a broken test,
// not a synchronisation.
const Bound = 30 * time.Second

// Group is the fake members of one script, and the log of what they
// received. Safe for concurrent use.
type Group struct {
	mu struct {
		sync.Mutex
		members map[string]*Member
		workers []*worker // in the order they started, as the members list them
		log     []received
		checked int               // the entries "got" lines matched
		grew    chan struct{}     // closed when the log grows
		rids    map[string][]byte // the request ids a script named, by name
	}
}

// received is one request a member received.
type received struct {
	member, method string
	req            proto.Message
}

// NewGroup returns a group of no members; they stop when t ends.
func NewGroup(t testing.TB) *Group {
	g := &Group{}
	g.mu.members = map[string]*Member{}
	g.mu.grew = make(chan struct{})
	g.mu.rids = map[string][]byte{}
	t.Cleanup(g.stop)
	return g
}

// Start starts the members named, each leading.
func (g *Group) Start(names ...string) error {
	for _, n := range names {
		m, err := start(g, n)
		if err != nil {
			return err
		}
		g.mu.Lock()
		g.mu.members[n] = m
		g.mu.Unlock()
	}
	return nil
}

// StartWorkers starts the fake workers named: the members list them, in
// this order, as the service's live workers.
func (g *Group) StartWorkers(names ...string) error {
	for _, n := range names {
		w, err := startWorker(g, n)
		if err != nil {
			return err
		}
		g.mu.Lock()
		g.mu.workers = append(g.mu.workers, w)
		g.mu.Unlock()
	}
	return nil
}

// workerInfos lists the workers as the service does.
func (g *Group) workerInfos() []*pb.WorkerInfo {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*pb.WorkerInfo
	for _, w := range g.mu.workers {
		out = append(out, w.info())
	}
	return out
}

// worker returns the worker named, or nil.
func (g *Group) worker(name string) *worker {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, w := range g.mu.workers {
		if w.name == name {
			return w
		}
	}
	return nil
}

func (g *Group) stop() {
	g.mu.Lock()
	ms, ws := g.mu.members, g.mu.workers
	g.mu.Unlock()
	for _, m := range ms {
		m.stop()
	}
	for _, w := range ws {
		w.stop()
	}
}

// Member returns the member named, or nil.
func (g *Group) Member(name string) *Member {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mu.members[name]
}

// addrOf is the address of the member named; "" for nobody.
func (g *Group) addrOf(name string) string {
	if m := g.Member(name); m != nil {
		return m.Addr()
	}
	return ""
}

// received logs a request. NB: but for ListWorkers: when a client asks for
// the list of workers is its own business (the Go reader also asks in the
// background, to warm the next block's worker when it is on this host).
func (g *Group) received(member, method string, req proto.Message) {
	if method == "ListWorkers" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mu.log = append(g.mu.log, received{member, method, proto.Clone(req)})
	close(g.mu.grew)
	g.mu.grew = make(chan struct{})
}

// Unchecked fails if members received requests that no "got" line
// matched.
func (g *Group) Unchecked() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if rest := g.mu.log[g.mu.checked:]; len(rest) > 0 {
		var s []string
		for _, r := range rest {
			s = append(s, describe(r))
		}
		return fmt.Errorf("requests no line expected: %s", strings.Join(s, "; "))
	}
	return nil
}

// Do carries out a member's or a worker's line ("m1 follows m2", "m1 got
// Mkdirs /a", "w1 refuses"...: the scripts' README); words[0] names it.
func (g *Group) Do(words []string) error {
	if w := g.worker(words[0]); w != nil && len(words) >= 2 {
		if words[1] == "got" {
			return g.got(words[0], words[2:])
		}
		return w.do(words[1])
	}
	m := g.Member(words[0])
	if m == nil || len(words) < 2 {
		return fmt.Errorf("no member or worker %q", words[0])
	}
	switch args := words[2:]; words[1] {
	case "leads":
		m.Lead()
	case "has":
		return m.has(args)
	case "follows":
		return g.follows(m, args)
	case "answers", "drops", "holds":
		return addRule(m, words[1], args)
	case "releases":
		m.Release()
	case "refuses":
		return m.lis.refuse()
	case "down":
		m.lis.goDown()
	case "up":
		return m.lis.up()
	case "tried":
		return g.tried(m, args)
	case "got":
		return g.got(words[0], args)
	default:
		return fmt.Errorf("unknown verb %q", words[1])
	}
	return nil
}

func (g *Group) follows(m *Member, args []string) error {
	if len(args) != 1 || (args[0] != nobody && g.Member(args[0]) == nil) {
		return fmt.Errorf("follows: want a member's name or nobody, got %v", args)
	}
	m.Follow(args[0])
	return nil
}

// tried waits until the member, down, took N connections: "tried N".
func (g *Group) tried(m *Member, args []string) error {
	n, err := strconv.Atoi(strings.Join(args, ""))
	if err != nil {
		return fmt.Errorf("tried: want a count, got %v", args)
	}
	return m.lis.awaitTried(n, Bound)
}

// addRule adds the rule of "answers METHOD PATH ANSWER [once]", "drops
// METHOD PATH [once]" or "holds METHOD PATH".
func addRule(m *Member, verb string, args []string) error {
	r := &rule{action: strings.TrimSuffix(verb, "s")}
	if r.action == "answer" && len(args) >= 3 {
		r.answer, args = args[2], append(args[:2:2], args[3:]...)
		if !slices.Contains([]string{"NOT_FOUND", "ALREADY_EXISTS", "NOT_LEADER"}, r.answer) {
			return fmt.Errorf("answers: unknown answer %q", r.answer)
		}
	}
	if len(args) == 3 && args[2] == "once" && r.action != "hold" {
		r.once, args = true, args[:2]
	}
	if len(args) != 2 || (r.action == "answer" && r.answer == "") {
		return fmt.Errorf("%s: want METHOD PATH%s, got %v", verb, map[bool]string{true: " ANSWER"}[r.action == "answer"], args)
	}
	r.method, r.path = args[0], args[1]
	m.addRule(r)
	return nil
}

// got matches the next request received, waiting for it, with "got
// METHOD PATH [rid=NAME] [first=true]" or "got Batch: CALL, CALL...".
func (g *Group) got(member string, args []string) error {
	want, err := parseGot(member, args)
	if err != nil {
		return err
	}
	r, err := g.next()
	if err != nil {
		return fmt.Errorf("%s: %w", want, err)
	}
	if err := g.match(want, r); err != nil {
		return fmt.Errorf("want %s, got %s: %w", want, describe(r), err)
	}
	return nil
}

// next returns the next entry of the log no line matched, waiting for it.
func (g *Group) next() (received, error) {
	timeout := time.After(Bound)
	for {
		g.mu.Lock()
		if g.mu.checked < len(g.mu.log) {
			r := g.mu.log[g.mu.checked]
			g.mu.checked++
			g.mu.Unlock()
			return r, nil
		}
		grew := g.mu.grew
		g.mu.Unlock()
		select {
		case <-grew:
		case <-timeout:
			return received{}, fmt.Errorf("no request came within %v", Bound)
		}
	}
}

// call is one call as a "got" line names it, or as a member received it.
type call struct {
	method, path, rid string // rid: a name, or hex
	first             bool
}

func (c call) String() string {
	s := strings.TrimSpace(c.method + " " + c.path)
	if c.rid != "" {
		s += " rid=" + c.rid
	}
	if c.first {
		s += " first=true"
	}
	return s
}

// got is what a "got" line expects.
type got struct {
	member string
	calls  []call // one, or a Batch's
	batch  bool
}

func (w got) String() string {
	if !w.batch {
		return w.member + " got " + w.calls[0].String()
	}
	s := make([]string, len(w.calls))
	for i, c := range w.calls {
		s[i] = c.String()
	}
	return w.member + " got Batch: " + strings.Join(s, ", ")
}

func parseGot(member string, args []string) (got, error) {
	w := got{member: member}
	line := strings.Join(args, " ")
	if rest, ok := strings.CutPrefix(line, "Batch:"); ok {
		w.batch, line = true, rest
	}
	for _, part := range strings.Split(line, ",") {
		f := strings.Fields(part)
		if len(f) < 1 {
			return w, fmt.Errorf("got: want METHOD [PATH] [rid=NAME] [first=true], got %q", part)
		}
		c := call{method: f[0]}
		opts := f[1:]
		if len(opts) > 0 && !strings.Contains(opts[0], "=") {
			c.path, opts = opts[0], opts[1:] // a request without a path has none
		}
		for _, o := range opts {
			switch k, v, _ := strings.Cut(o, "="); {
			case k == "rid" && v != "":
				c.rid = v
			case o == "first=true":
				c.first = true
			default:
				return w, fmt.Errorf("got: unknown %q", o)
			}
		}
		w.calls = append(w.calls, c)
	}
	return w, nil
}

// match checks r against want, binding the request ids want names. A
// batch's calls may come in any order: both sides are sorted by path.
func (g *Group) match(want got, r received) error {
	have := callsOf(r)
	if r.member != want.member || want.batch != (r.method == "Batch") || len(have) != len(want.calls) {
		return fmt.Errorf("another request")
	}
	byPath := func(a, b call) int { return strings.Compare(a.path, b.path) }
	wc := slices.SortedFunc(slices.Values(want.calls), byPath)
	slices.SortFunc(have, byPath)
	for i, h := range have {
		w := wc[i]
		if h.method != w.method || h.path != w.path || h.first != w.first {
			return fmt.Errorf("%s is not %s", h, w)
		}
		if err := g.sameID(w.rid, h.rid); err != nil {
			return fmt.Errorf("%s: %w", w, err)
		}
	}
	return nil
}

// sameID checks that a request id (hex; "" for none) is the one a script
// names (""; none): the same as before under that name, and not another
// name's.
func (g *Group) sameID(name, hexID string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	id := []byte(hexID)
	switch bound, ok := g.mu.rids[name]; {
	case name == "" && hexID == "":
		return nil
	case name == "" || hexID == "":
		return fmt.Errorf("request id %q, want %q", hexID, name)
	case ok && !bytes.Equal(bound, id):
		return fmt.Errorf("request id %s, not %s's (%s)", hexID, name, bound)
	case ok:
		return nil
	}
	for n, b := range g.mu.rids {
		if bytes.Equal(b, id) {
			return fmt.Errorf("request id %s is %s's, not a new one", hexID, n)
		}
	}
	g.mu.rids[name] = id
	return nil
}

// callsOf lists the calls of r: itself, or a Batch's.
func callsOf(r received) []call {
	b, ok := r.req.(*pb.BatchRequest)
	if !ok {
		return []call{callOf(r.method, r.req)}
	}
	var out []call
	for _, c := range b.Calls {
		out = append(out, callOf(batchCall(c)))
	}
	return out
}

func callOf(method string, req proto.Message) call {
	c := call{method: method, path: pathOf(req)}
	if h, ok := req.(interface{ GetHeader() *pb.Header }); ok {
		c.rid, c.first = fmt.Sprintf("%x", h.GetHeader().GetRequestId()), h.GetHeader().GetFirstAttempt()
		if len(h.GetHeader().GetRequestId()) == 0 {
			c.rid = ""
		}
	}
	return c
}

func describe(r received) string {
	return got{member: r.member, calls: callsOf(r), batch: r.method == "Batch"}.String()
}
