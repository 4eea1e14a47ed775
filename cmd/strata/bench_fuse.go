package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/bench/benchkit"
	"github.com/stratafs/strata/bench/fusebench"
	"github.com/stratafs/strata/internal/fusefs"
)

type benchFuseFlags struct {
	dir               string
	fileSize, cache   string
	files, readers    int
	metaOps, smallTar int
	keep              bool
}

func benchFuseCmd() *cobra.Command {
	f := &benchFuseFlags{}
	cmd := &cobra.Command{
		Use:   "fuse",
		Short: "a mounted namespace against a local directory on the same disk",
		Long: `Starts strata server --dev and strata mount on a scratch directory, and makes
the same operations in the mount and in a local directory beside it, in one
run, printing each row's figures and their ratio: sequential reads of a file
the worker cached (1 reader, several readers of it, several files with a
reader each; every page cache involved emptied first), a cp of a local file
into the mount against strata fs -put of the same file, a write from memory
against the local disk's, creates, stats and 4 KiB files written and read
per second, and a tar -x of many small files.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBenchFuse(f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", "", "scratch directory, on the disk to measure (default: a new one in the system's temporary directory)")
	fl.StringVar(&f.fileSize, "file-size", "1GiB", "the big file's size")
	fl.IntVar(&f.files, "files", 8, "files of the many-files read (file-size/files each)")
	fl.IntVar(&f.readers, "readers", 8, "readers of the many-readers reads, and threads of the metadata rows")
	fl.IntVar(&f.metaOps, "meta-ops", 4000, "creates, stats, writes and reads of 4 KiB files, each")
	fl.IntVar(&f.smallTar, "tar-files", 100000, "small files in the tar archive extracted (0: none)")
	fl.StringVar(&f.cache, "worker-cache-size", "8GiB", "the dev server's worker cache")
	fl.BoolVar(&f.keep, "keep", false, "keep the scratch directory")
	return cmd
}

func runBenchFuse(f *benchFuseFlags) error {
	size, err := parseBytes(f.fileSize)
	if err != nil {
		return usagef("--file-size: %v", err)
	}
	dir := f.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "strata-bench-fuse-"); err != nil {
			return err
		}
	}
	if !f.keep {
		defer os.RemoveAll(dir)
	}
	b, err := startBenchCluster(dir, f.cache)
	if err != nil {
		return err
	}
	defer b.stop()
	cfg := fusebench.Config{Local: filepath.Join(dir, "local"), Mount: filepath.Join(b.mnt, "bench"),
		Cache: filepath.Join(dir, "data", "worker", "cache"), FileSize: size, Files: f.files, Readers: f.readers,
		MetaOps: f.metaOps, SmallTar: f.smallTar, Put: b.put, Log: os.Stderr}
	for _, d := range []string{cfg.Local, cfg.Mount} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	fmt.Println(benchkit.DescribeMachine().WithDisk(dir).String())
	rows, err := fusebench.Run(cfg)
	printFuseRows(rows)
	return err
}

func printFuseRows(rows []fusebench.Row) {
	table := [][]string{{"operation", "baseline", "unit", "baseline", "strata mount", "ratio"}}
	for _, r := range rows {
		table = append(table, []string{r.Op, r.Baseline, r.Unit, fmt.Sprintf("%.0f", r.Base), fmt.Sprintf("%.0f", r.Mount),
			fmt.Sprintf("%.2f", r.Mount/r.Base)})
	}
	fmt.Print(benchkit.AlignRows(table, 3, 0))
}

// benchCluster is the dev server and the mount a run measures.
type benchCluster struct {
	srv, mount *exec.Cmd
	env        []string
	mnt        string
}

func startBenchCluster(dir, cache string) (*benchCluster, error) {
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return nil, err
	}
	b := &benchCluster{mnt: filepath.Join(dir, "mnt")}
	if err := os.MkdirAll(b.mnt, 0o755); err != nil {
		return nil, err
	}
	b.srv = exec.Command(self(), "server", "--dev", "--data-dir", data, "--listen", "127.0.0.1:0", "--plaintext",
		"--client-token-file=", "--trash-interval", "0", "--worker-cache-size", cache)
	addr, err := startAndWait(b.srv, "strata: serving on ")
	if err != nil {
		return nil, fmt.Errorf("strata server --dev: %w", err)
	}
	tok, err := os.ReadFile(filepath.Join(data, "token"))
	if err != nil {
		b.stop()
		return nil, err
	}
	b.env = append(os.Environ(), "STRATA_META="+addr, "STRATA_TOKEN="+strings.TrimSpace(string(tok)), "STRATA_PLAINTEXT=1")
	b.mount = exec.Command(self(), "mount", "default", b.mnt, "--state-dir", filepath.Join(dir, "state"))
	b.mount.Env = b.env
	if _, err := startAndWait(b.mount, "strata: mounted "); err != nil {
		b.stop()
		return nil, fmt.Errorf("strata mount: %w", err)
	}
	return b, nil
}

// startAndWait starts cmd and returns the rest of the first line of its
// output that begins with prefix.
func startAndWait(cmd *exec.Cmd, prefix string) (string, error) {
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return "", err
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok {
				select {
				case found <- rest:
				default:
				}
			}
		}
	}()
	select {
	case rest := <-found:
		return rest, nil
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		return "", fmt.Errorf("no %q within a minute", prefix)
	}
}

// put is strata fs -put of local to name.
func (b *benchCluster) put(local, name string) error {
	cmd := exec.Command(self(), "fs", "-put", local, name)
	cmd.Env = b.env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("fs -put: %v: %s", err, out)
	}
	return nil
}

func (b *benchCluster) stop() {
	if b.mount != nil && b.mount.Process != nil {
		if err := fusefs.Unmount(b.mnt, false); err != nil {
			_ = fusefs.Unmount(b.mnt, true)
		}
		b.mount.Wait()
	}
	if b.srv != nil && b.srv.Process != nil {
		b.srv.Process.Signal(os.Interrupt)
		b.srv.Wait()
	}
}
