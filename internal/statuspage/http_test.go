package statuspage_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/connlimit"
	"github.com/stratafs/strata/internal/metrics"
	"github.com/stratafs/strata/internal/statuspage"
	"github.com/stratafs/strata/internal/testcluster"
)

// answer is what a request got: its status, a header, its body.
type answer struct {
	status int
	header http.Header
	body   string
}

func request(t *testing.T, method, url, token string, header map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// The status page's data is a superuser's alone: refused without a token
// (401, saying how to give one), with a token the service did not sign
// (401, saying why), with another user's (403); metrics stay open. What
// the listener does not serve is answered with a status and a line saying
// why; a worker's listener serves metrics only.
func TestRefusals(t *testing.T) {
	cl := startCluster(t, nil, nil)
	base := "http://" + cl.g.Member(cl.leader()).HTTP()
	alice := testcluster.Token(t, cl.g.Meta(), "alice")
	forged := cl.admin[:len(cl.admin)-4] + "AAAA"
	for _, tc := range []struct {
		name, method, path, token string
		header                    map[string]string
		status                    int
		says                      string
	}{
		{"no token", "GET", "/api/status", "", nil, 401, "a superuser's token is needed"},
		{"a forged token", "GET", "/api/status", forged, nil, 401, "unauthenticated"},
		{"garbage", "GET", "/api/status", "not a token", nil, 401, "unauthenticated"},
		{"another user's token", "GET", "/api/status", alice, nil, 403, "alice is not a superuser"},
		{"a post", "POST", "/api/status", cl.admin, nil, 405, "only GET and HEAD"},
		{"a delete of metrics", "DELETE", "/metrics", "", nil, 405, "only GET and HEAD"},
		{"an unknown path", "GET", "/admin", "", nil, 404, "no such page"},
		{"a path outside", "GET", "/../../etc/passwd", "", nil, 404, "no such page"},
		{"a huge header", "GET", "/metrics", "", map[string]string{"X-Junk": strings.Repeat("j", 64<<10)}, 431, ""},
		{"metrics, open", "GET", "/metrics", "", nil, 200, "strata_raft_term"},
		{"health, open", "GET", "/healthz", "", nil, 200, "ok"},
		{"the page, open (no data in it)", "GET", "/status", "", nil, 200, "<title>Strata status</title>"},
		{"the data, a superuser", "GET", "/api/status", cl.admin, nil, 200, `"namespaces"`},
	} {
		a := request(t, tc.method, base+tc.path, tc.token, tc.header)
		if a.status != tc.status || !strings.Contains(a.body, tc.says) {
			t.Errorf("%s: %s %s answered %d %q, want %d saying %q", tc.name, tc.method, tc.path, a.status, a.body, tc.status, tc.says)
		}
	}
	if a := request(t, "GET", base+"/api/status", "", nil); a.header.Get("WWW-Authenticate") == "" {
		t.Errorf("a 401 without WWW-Authenticate")
	}
	var st statuspage.Status
	a := request(t, "GET", base+"/api/status", cl.admin, nil)
	if err := json.Unmarshal([]byte(a.body), &st); err != nil || len(st.Members) != 3 || len(st.Namespaces) != 2 {
		t.Errorf("the status: %v, %d members, %d namespaces:\n%s", err, len(st.Members), len(st.Namespaces), a.body)
	}
	w := "http://" + cl.worker.HTTP()
	if a := request(t, "GET", w+"/status", cl.admin, nil); a.status != 404 || !strings.Contains(a.body, "serves /metrics") {
		t.Errorf("a worker's /status: %d %q", a.status, a.body)
	}
	if a := request(t, "GET", w+"/metrics", "", nil); a.status != 200 {
		t.Errorf("a worker's /metrics: %d", a.status)
	}
	if a := request(t, "GET", w+"/healthz", "", nil); a.status != 200 || a.body != "ok\n" {
		t.Errorf("a worker's /healthz: %d %q", a.status, a.body)
	}
}

// The listener is bounded as the gRPC ports are: a connection over the
// per-address cap is closed as it comes, one that sends no request in time
// is closed then.
func TestListenerBounds(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := metrics.NewProcess(slog.Default(), time.Second)
	srv := statuspage.Serve(statuspage.Config{Registry: p.Registry,
		Conns: connlimit.Config{MaxPerAddr: 2, FirstCall: 300 * time.Millisecond}}, lis)
	defer srv.Close()
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	over, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer over.Close()
	if n, err := over.Read(make([]byte, 1)); err == nil {
		t.Errorf("a connection over the cap was served (%d bytes)", n)
	}
	// The two held ones send nothing: both are closed at the first-call
	// deadline (the read ends), well before the test's own bound.
	for _, c := range held {
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil || isTimeout(err) {
			t.Errorf("a silent connection stayed open: %v", err)
		}
	}
	// A connection that makes a request stays and is answered.
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("a request on a fresh connection: %v", err)
	}
	resp.Body.Close()
	// What was refused and closed is counted.
	s, _ := get(t, srv.Addr)
	if v := s.value(t, "strata_connections_refused_total", "port=http"); v != 1 {
		t.Errorf("refused: %v, want 1", v)
	}
	if v := s.value(t, "strata_connections_expired_total", "port=http"); v != 2 {
		t.Errorf("expired: %v, want 2", v)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// With the service's TLS, the listener serves HTTPS only.
func TestTLS(t *testing.T) {
	files, server := testcluster.DevTLS(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := metrics.NewProcess(slog.Default(), time.Second)
	srv := statuspage.Serve(statuspage.Config{Registry: p.Registry, TLS: server}, lis)
	defer srv.Close()
	ca, err := os.ReadFile(files.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get("https://" + srv.Addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("https /metrics: %d", resp.StatusCode)
	}
	if a := request(t, "GET", "http://"+srv.Addr+"/metrics", "", nil); a.status != 400 {
		t.Errorf("plain http to the TLS listener: %d %q", a.status, a.body)
	}
}
