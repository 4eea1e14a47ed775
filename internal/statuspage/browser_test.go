package statuspage_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/loopback"
)

// TestStatusPageInChromium opens the leader's status page in a real
// headless Chromium (Debian's, driven through its chromedriver), checks
// what it shows against the cluster (three members, one of them leading;
// the worker; the two namespaces; the leader changes; the slow calls) and
// saves a screenshot ($STRATA_SCREENSHOTS, else the test's directory);
// then does the same with a follower down, which the page shows as not
// answering. Without a token the page shows only where to give one.
func TestStatusPageInChromium(t *testing.T) {
	cl := startCluster(t, []string{"--slow-call", "1us"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := range 3 {
		mustNot(t, cl.c.WriteFile(ctx, filePath(i), data(256<<10), client.CreateOptions{}), "write")
	}
	mustNot(t, cl.c.WriteFile(ctx, "strata://lake/t/part-0", data(100<<10), client.CreateOptions{}), "write to lake")
	workers, err := cl.c.Workers(ctx)
	mustNot(t, err, "list the workers")
	lead := cl.leader()
	page := "http://" + cl.g.Member(lead).HTTP() + "/status"
	b := startBrowser(t)

	b.open(page)
	b.waitFor(`document.getElementById("login").style.display === "block"`, "the page to ask for a token")
	if shown := b.eval(`return document.getElementById("content").hidden`); shown != true {
		t.Errorf("without a token the page shows the cluster")
	}

	b.open(page + "#token=" + cl.admin)
	b.waitFor(`document.querySelectorAll("#members tr").length === 4 &&
		document.querySelectorAll("#workers tr").length === 2`, "three members and a worker")
	roles := b.column("members", 2)
	if strings.Count(roles, "Leader") != 1 || strings.Count(roles, "Follower") != 2 {
		t.Errorf("the members' roles: %s", roles)
	}
	if ns := b.column("namespaces", 0); !strings.Contains(ns, "default") || !strings.Contains(ns, "lake") {
		t.Errorf("the namespaces: %s", ns)
	}
	if sizes := b.column("namespaces", 5); !strings.Contains(sizes, "768.0 KiB") || !strings.Contains(sizes, "100.0 KiB") {
		t.Errorf("the namespaces' sizes: %s (want 768.0 KiB and 100.0 KiB)", sizes)
	}
	if ws := b.column("workers", 0); !strings.Contains(ws, workers[0].Info.GetId()) {
		t.Errorf("the workers: %s, want %s", ws, workers[0].Info.GetId())
	}
	if n := b.eval(`return document.querySelectorAll("#leaders tr").length`); n.(float64) < 2 {
		t.Errorf("no leader change shown")
	}
	if tr := b.column("slow", 4); tr == "" {
		t.Errorf("the slow calls show no trace ids")
	}
	b.screenshot("status.png")

	down := lead%3 + 1
	cl.g.Kill(down)
	b.waitFor(fmt.Sprintf(`Array.from(document.querySelectorAll("#members tr")).some(r =>
		r.cells[0].textContent === "%d" && r.cells[2].textContent === "no answer")`, down), "the member down")
	if roles := b.column("members", 2); strings.Count(roles, "Leader") != 1 || strings.Count(roles, "no answer") != 1 {
		t.Errorf("the members' roles with member %d down: %s", down, roles)
	}
	b.screenshot("status-member-down.png")
}

// browser is a headless Chromium session, driven through chromedriver's
// WebDriver protocol (plain HTTP and JSON).
type browser struct {
	t       *testing.T
	driver  string // chromedriver's base URL
	session string
}

// startBrowser starts chromedriver and a headless Chromium session, both
// ended at cleanup. Chromium runs with the flags this machine needs (no
// sandbox as root, no GPU, no network of its own).
func startBrowser(t *testing.T) *browser {
	t.Helper()
	bin, err := exec.LookPath("chromedriver")
	if err != nil {
		t.Fatal("no chromedriver: install Debian's chromium and chromium-driver (scripts/deps/install.sh, which make test runs)")
	}
	addrs, err := loopback.FreeAddrs(1)
	mustNot(t, err, "a port for chromedriver")
	_, port, _ := strings.Cut(addrs[0], ":")
	cmd := exec.Command(bin, "--port="+port)
	mustNot(t, cmd.Start(), "start chromedriver")
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	b := &browser{t: t, driver: "http://" + addrs[0]}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var st struct{ Ready bool }
		if b.call("GET", "/status", nil, &st) == nil && st.Ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("chromedriver did not start within 30s")
		}
		time.Sleep(20 * time.Millisecond) // polling chromedriver's status
	}
	args := []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--window-size=1400,1100", "--user-data-dir=" + t.TempDir()}
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{"browserName": "chrome",
		"goog:chromeOptions": map[string]any{"binary": chromium(t), "args": args}}}}
	var s struct{ SessionID string }
	mustNot(t, b.call("POST", "/session", caps, &s), "start a Chromium session")
	b.session = s.SessionID
	t.Cleanup(func() { _ = b.call("DELETE", "/session/"+b.session, nil, nil) })
	return b
}

func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium: install Debian's chromium (scripts/deps/install.sh, which make test runs)")
	return ""
}

// call makes a WebDriver request and decodes its answer's value into out.
func (b *browser) call(method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		j, _ := json.Marshal(in)
		body = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, b.driver+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("webdriver %s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	var v struct{ Value json.RawMessage }
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	return json.Unmarshal(v.Value, out)
}

func (b *browser) s(path string) string { return "/session/" + b.session + path }

func (b *browser) open(url string) {
	b.t.Helper()
	mustNot(b.t, b.call("POST", b.s("/url"), map[string]any{"url": url}, nil), "open %s", url)
}

// eval runs script (a function body) in the page and returns its value.
func (b *browser) eval(script string) any {
	b.t.Helper()
	var v any
	mustNot(b.t, b.call("POST", b.s("/execute/sync"), map[string]any{"script": script, "args": []any{}}, &v), "run %q", script)
	return v
}

// waitFor waits, at most a minute, until cond (an expression) holds in
// the page, which refreshes itself every 2 s.
func (b *browser) waitFor(cond, what string) {
	b.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for b.eval("return Boolean("+cond+")") != true {
		if time.Now().After(deadline) {
			b.t.Logf("the page's log: %v", b.logs())
			b.screenshot("timeout.png")
			b.t.Fatalf("the page did not show %s within a minute; it shows:\n%v", what, b.eval("return document.body.innerText"))
		}
		time.Sleep(50 * time.Millisecond) // polling the page
	}
}

// column returns the texts of column i of table id's rows, one a line.
func (b *browser) column(id string, i int) string {
	b.t.Helper()
	v := b.eval(fmt.Sprintf(`return Array.from(document.querySelectorAll("#%s tr")).slice(1).map(r => r.cells.length > %d ? r.cells[%d].textContent : "").join("\n")`, id, i, i))
	return v.(string)
}

// screenshot saves the page as name in $STRATA_SCREENSHOTS or the test's
// directory.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	var data string
	mustNot(b.t, b.call("GET", b.s("/screenshot"), nil, &data), "take a screenshot")
	png, err := base64.StdEncoding.DecodeString(data)
	mustNot(b.t, err, "decode the screenshot")
	dir := os.Getenv("STRATA_SCREENSHOTS")
	if dir == "" {
		dir = b.t.TempDir()
	}
	mustNot(b.t, os.MkdirAll(dir, 0o755), "make %s", dir)
	path := filepath.Join(dir, name)
	mustNot(b.t, os.WriteFile(path, png, 0o644), "save the screenshot")
	b.t.Logf("screenshot: %s", path)
}

// logs returns what the page logged (its script's errors among them).
func (b *browser) logs() any {
	var v any
	if err := b.call("POST", b.s("/se/log"), map[string]any{"type": "browser"}, &v); err != nil {
		return err
	}
	return v
}
