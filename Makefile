# Strata's build. `make` alone lists the targets.

GO          ?= go
BIN         := bin/strata
CACHE_BIN   := $(CURDIR)/.cache/bin
BUF         := $(CACHE_BIN)/buf
BUF_VERSION := v1.75.0
PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
STATICCHECK_VERSION        := v0.6.1
RUN_DATA    ?= ./strata-data
RUN_LISTEN  ?= 127.0.0.1:7700

.DEFAULT_GOAL := help
.PHONY: help build run deps test test-go test-java test-spark test-python python-wheel java minio pjdfstest promtool deploy-tools lint proto-release generate bench bench-hdfs bench-cache-meta bench-tpcds bench-hbase bench-distcp bench-cold fuzz clean

help: ## list the targets
	@echo "Strata: make TARGET"
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 12 | sed 's/^/  /'

# The source revision `strata version` prints (Go's own stamp is missing in a
# git worktree): HEAD, with -modified when tracked files have changes.
REVISION = $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -modified)

build: ## build bin/strata
	@GO=$(GO) LDFLAGS="-X main.revision=$(REVISION)" scripts/build/strata.sh $(BIN)

run: build ## start Strata on its embedded default (one process, a local directory as the bucket)
	@echo "Starting strata server --dev on $(RUN_LISTEN), data in $(RUN_DATA) (delete it to start over)."
	@echo "In another shell:"
	@echo "  bin/strata fs -mkdir -p /a/b && bin/strata fs -touchz /a/b/f && bin/strata fs -ls -R /"
	@echo "  bin/strata admin status"
	@echo "Stop with Ctrl-C."
	$(BIN) server --dev --listen $(RUN_LISTEN) --data-dir $(RUN_DATA)

test: deps minio pjdfstest promtool deploy-tools test-go test-java test-spark test-python ## install what the tests need, then run them all

deps: ## check for what make test needs (a C compiler, Java 17, Maven, unzip, Python 3.11 with venv and headers, fuse3, cargo 1.85+, Chromium and chromedriver); apt-get the rest as root on Debian
	@scripts/deps/install.sh

test-go: deps minio pjdfstest promtool deploy-tools ## run the Go tests (race detector on)
	@echo "test-go: the Go tests with the race detector (about 10 minutes on 2 cores when it compiles them first)"
	STRATA_MINIO=$(CACHE_BIN)/minio STRATA_PJDFSTEST=$(CACHE_BIN)/pjdfstest STRATA_PROMTOOL=$(CACHE_BIN)/promtool $(GO) test -race -timeout 30m ./...

java: deps ## build the Java client and its shaded jar (java/hadoop/target/*-shaded.jar)
	java/build.sh

test-java: deps build minio ## Java tests (Hadoop contract suites, block and cache mode) against a real strata server and MinIO, then check the shaded jar
	@echo "test-java: the Java client's tests against bin/strata and MinIO (about 4 minutes on 2 cores, more when Maven downloads first)"
	STRATA_BINARY=$(CURDIR)/$(BIN) STRATA_MINIO=$${STRATA_MINIO:-$(CACHE_BIN)/minio} java/test.sh

test-spark: build minio ## PySpark (installed into .cache/venv) on Strata: Parquet tables, INSERT OVERWRITE, a retried task (about 2 minutes; 4 more to install pyspark)
	STRATA_BINARY=$(CURDIR)/$(BIN) STRATA_MINIO=$${STRATA_MINIO:-$(CACHE_BIN)/minio} scripts/spark/test.sh

test-python: deps build minio ## the Python package (installed from its wheel into .cache/venv-python) against a real strata server and MinIO: fsspec's suites, PyArrow, pandas, Polars, DuckDB, fork (about 3 minutes; 35 s more to install)
	STRATA_BINARY=$(CURDIR)/$(BIN) STRATA_MINIO=$${STRATA_MINIO:-$(CACHE_BIN)/minio} scripts/python/test.sh

python-wheel: deps build ## build the Python package's wheel, the strata binary bundled, into python/dist
	STRATA_BINARY=$(CURDIR)/$(BIN) scripts/python/wheel.sh

minio: ## build the MinIO test server from source at its pinned version
	scripts/minio/install.sh

pjdfstest: ## build the POSIX conformance suite the mount's tests run (pjdfstest, from crates.io) at its pinned version
	scripts/pjdfstest/install.sh

deploy-tools: ## build helm and kubeconform at their pinned versions and fetch Kubernetes' API schemas (the Helm chart's test, scripts/deploy)
	scripts/deploy/install.sh

promtool: ## build Prometheus' promtool (checks /metrics and the Grafana dashboard in the tests) at its pinned version
	scripts/promtool/install.sh

lint: deps $(BUF) ## gofmt, go vet, staticcheck, ruff and mypy (strict) on python/, and proto/ checked against its last release (docs/logformat.md)
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt: not formatted (gofmt -w them):"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	STRATA_VENV=$(CURDIR)/.cache/venv-python scripts/spark/venv.sh $(CURDIR)/python/requirements-test.txt
	$(CURDIR)/.cache/venv-python/bin/ruff check python
	cd python && $(CURDIR)/.cache/venv-python/bin/mypy
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	$(BUF) breaking --against proto/released.binpb

proto-release: $(BUF) ## record proto/ as released: the baseline of make lint's breaking check
	$(BUF) build -o proto/released.binpb

$(BUF):
	GOBIN=$(CACHE_BIN) $(GO) install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)

generate: $(BUF) ## regenerate the gRPC code from proto/ with buf
	GOBIN=$(CACHE_BIN) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(CACHE_BIN) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	PATH=$(CACHE_BIN):$$PATH buf generate

bench: build ## run the benchmarks against an embedded service and print the tables
	$(BIN) bench meta --embedded

bench-hdfs: ## Strata and a real HDFS side by side through the Hadoop API; updates docs/benchmarks.md (BENCH_QUICK=1: small)
	scripts/bench-hdfs/run.sh $(ARGS)

bench-cache-meta: ## cache mode's metadata against S3A on the same MinIO bucket, through the Hadoop API (prints a table)
	scripts/bench-cache-meta/run.sh $(ARGS)

bench-tpcds: minio ## TPC-DS on Spark: s3a:// direct, strata:// cold and warm, behind one bandwidth limit; updates docs/benchmarks.md (about 1 hour)
	STRATA_MINIO=$${STRATA_MINIO:-$(CACHE_BIN)/minio} scripts/bench-tpcds/run.sh

bench-distcp: ## DistCp of 10,000 files HDFS -> Strata -> HDFS against HDFS -> HDFS, and getFileChecksum of 1 GiB on both (BENCH_QUICK=1: small)
	scripts/bench-distcp/run.sh $(ARGS)

bench-hbase: ## YCSB on HBase with its root directory and log on Strata, then on HDFS; updates docs/benchmarks.md (BENCH_QUICK=1: small)
	scripts/bench-hbase/run.sh $(ARGS)

bench-cold: minio ## cold sequential reads from MinIO behind a bandwidth limit (BENCH_BANDWIDTH, 250MB), as a share of it (prints a table)
	STRATA_MINIO=$${STRATA_MINIO:-$(CACHE_BIN)/minio} scripts/bench-cold/run.sh

fuzz: ## run every fuzz target for a while (FUZZTIME, default 30s each)
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $${FUZZTIME:-30s} $$pkg || exit 1; \
	  done; \
	done

clean: ## remove build products (not the data of make run)
	rm -rf bin java/*/target
