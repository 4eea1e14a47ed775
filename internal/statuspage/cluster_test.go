package statuspage_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/testcluster"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// cluster is what the tests here look at: a group of three `strata meta`
// processes, a `strata worker` process, each with its HTTP listener, and
// two namespaces ("default" and "lake"), on loopback.
type cluster struct {
	t         *testing.T
	g         *testcluster.Group
	worker    *testcluster.Process
	workerDir string // its state and cache
	admin     string // the superuser's token
	c         *client.Client
}

// startCluster starts the cluster; metaArgs go to the members, workerArgs
// to the worker.
func startCluster(t *testing.T, metaArgs, workerArgs []string) *cluster {
	t.Helper()
	g := testcluster.StartGroup(t, 3, metaArgs...)
	cl := &cluster{t: t, g: g, admin: testcluster.AdminToken(t, g.Meta()), workerDir: t.TempDir()}
	cl.worker = testcluster.StartWorker(t, g.Meta(), cl.workerDir, append([]string{"--http-listen", "127.0.0.1:0"}, workerArgs...)...)
	cl.c = g.Client("")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lake := filepath.Join(t.TempDir(), "lake")
	if err := os.Mkdir(lake, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := cl.c.CreateNamespace(ctx, &pb.NamespaceInfo{Name: "lake", Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK,
		StoreUri: "file://" + lake}); err != nil {
		t.Fatal(err)
	}
	cl.waitForWorker(ctx)
	return cl
}

// waitForWorker waits until the leader lists the worker.
func (cl *cluster) waitForWorker(ctx context.Context) {
	cl.t.Helper()
	for {
		if ws, err := cl.c.Workers(ctx); err == nil && len(ws) > 0 {
			return
		}
		select {
		case <-ctx.Done():
			cl.t.Fatal("the worker did not register")
		case <-time.After(20 * time.Millisecond): // polling the leader's registry
		}
	}
}

// leader returns the member that leads.
func (cl *cluster) leader() int {
	cl.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := cl.g.Leader(ctx)
	if err != nil {
		cl.t.Fatal(err)
	}
	return l
}

// scrape is one read of a process's /metrics, by family name.
type scrape map[string]*dto.MetricFamily

// get reads addr's /metrics over HTTP and parses it.
func get(t *testing.T, addr string) (scrape, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/metrics: %d %v\n%s", addr, resp.StatusCode, err, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("%s/metrics does not parse: %v", addr, err)
	}
	return fams, string(body)
}

// value is the value of family name's series whose labels include
// labels ("k=v" each), summed over the series that match: a counter's or
// a gauge's value, a histogram's count. It fails the test if none does.
func (s scrape) value(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	v, ok := s.lookup(name, labels...)
	if !ok {
		t.Fatalf("no series %s%v in the scrape; families: %v", name, labels, s.names())
	}
	return v
}

func (s scrape) lookup(name string, labels ...string) (float64, bool) {
	f := s[name]
	if f == nil {
		return 0, false
	}
	sum, found := 0.0, false
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		if !slices.ContainsFunc(labels, func(kv string) bool { k, v, _ := strings.Cut(kv, "="); return have[k] != v }) {
			found = true
			switch {
			case m.Counter != nil:
				sum += m.GetCounter().GetValue()
			case m.Gauge != nil:
				sum += m.GetGauge().GetValue()
			case m.Histogram != nil:
				sum += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum, found
}

func (s scrape) names() []string {
	var out []string
	for n := range s {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// eventually polls addr's /metrics until ok holds of a scrape, for at most
// a minute, and returns that scrape.
func eventually(t *testing.T, addr, what string, ok func(scrape) bool) scrape {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		s, _ := get(t, addr)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not seen on %s/metrics within a minute", what, addr)
		}
		time.Sleep(50 * time.Millisecond) // polling the process's metrics
	}
}

func data(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}

func mustNot(t *testing.T, err error, what string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(what, args...), err)
	}
}
