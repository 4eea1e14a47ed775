#!/usr/bin/env bash
# Runs the Java client's tests against a real `strata server --dev`, then
# checks the shaded jar: every bundled class relocated under io.strata.shaded,
# and `hadoop fs` working with only Hadoop's jars and the shaded jar on the
# classpath (so Hadoop's own protobuf and Guava do not meet ours), small files
# and a multi-block one through the worker (read back short-circuit).
#   STRATA_BINARY  the strata binary (default: bin/strata at the repository root)
#   STRATA_MINIO   the MinIO the cache-mode tests start (default: .cache/bin/minio, `make minio`)
#   extra arguments go to Maven, e.g. -Dtest=TestStrataDataPath -Dsurefire.failIfNoSpecifiedTests=false.
set -euo pipefail
cd "$(dirname "$0")"
BIN=$(realpath "${STRATA_BINARY:-../bin/strata}")
[ -x "$BIN" ] || { echo "test.sh: $BIN is missing: run 'make build' first" >&2; exit 1; }
MINIO=$(realpath -m "${STRATA_MINIO:-../.cache/bin/minio}")
[ -x "$MINIO" ] || { echo "test.sh: $MINIO is missing: run 'make minio' first (or set STRATA_MINIO)" >&2; exit 1; }

./mvn.sh install -Dstrata.binary="$BIN" -Dstrata.minio="$MINIO" "$@"
echo "test.sh: checking the shaded jar"

JAR=$(ls hadoop/target/strata-hadoop-*-shaded.jar)
bad=$(unzip -Z1 "$JAR" | grep '\.class$' | grep -v '^io/strata/' || true)
if [ -n "$bad" ]; then
  echo "test.sh: classes outside io/strata in $JAR:" >&2
  echo "$bad" | head -20 >&2
  exit 1
fi

work=$(mktemp -d)
pid=
trap 'if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT

# Hadoop's own classpath, as a Hadoop install has it (its Guava, no gRPC), not ours.
hadoop_version=$(sed -n 's:.*<hadoop.version>\(.*\)</hadoop.version>.*:\1:p' pom.xml)
cat >"$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.strata</groupId><artifactId>shaded-smoke</artifactId><version>0</version>
  <dependencies>
    <dependency>
      <groupId>org.apache.hadoop</groupId><artifactId>hadoop-common</artifactId>
      <version>$hadoop_version</version>
    </dependency>
  </dependencies>
</project>
POM
./mvn.sh -q -f "$work/pom.xml" \
  org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath \
  -Dmdep.outputFile="$work/hadoop.classpath"
"$BIN" server --dev --data-dir "$work/data" --listen 127.0.0.1:0 --client-token-file= \
  2>"$work/server.log" >/dev/null &
pid=$!
for _ in $(seq 100); do
  grep -q 'strata: serving on' "$work/server.log" && break
  sleep 0.1
done
addr=$(sed -n 's/^strata: serving on //p' "$work/server.log")
[ -n "$addr" ] || { echo "test.sh: the server did not start:" >&2; cat "$work/server.log" >&2; exit 1; }

# As a Hadoop install configures it: etc/hadoop/core-site.xml on the classpath.
mkdir -p "$work/conf"
# The dev server serves TLS with a CA of its own (unless STRATA_PLAINTEXT=1): the client
# checks it with that CA, through the shaded gRPC's TLS.
tls=""
if [ -f "$work/data/tls/ca.pem" ]; then
  tls="<property><name>fs.strata.tls.ca</name><value>$work/data/tls/ca.pem</value></property>"
  export STRATA_TLS_CA="$work/data/tls/ca.pem" # for strata admin below
fi
cat >"$work/conf/core-site.xml" <<XML
<configuration>
  <property><name>fs.strata.meta.address</name><value>$addr</value></property>
  $tls
  <property><name>fs.strata.token.file</name><value>$work/data/token</value></property>
</configuration>
XML
fs() {
  if ! java -cp "$work/conf:$JAR:$(cat "$work/hadoop.classpath")" org.apache.hadoop.fs.FsShell \
      "$@" 2>>"$work/shell.log"; then
    echo "test.sh: hadoop fs $* failed with the shaded jar:" >&2
    cat "$work/shell.log" >&2
    return 1
  fi
}
echo "shaded jar smoke test" > "$work/hello.txt"
fs -mkdir -p strata://default/smoke/dir
fs -put "$work/hello.txt" strata://default/smoke/dir/hello.txt
got=$(fs -cat strata://default/smoke/dir/hello.txt)
listing=$(fs -ls -R strata://default/smoke)
if [ "$got" != "shaded jar smoke test" ] || ! grep -q 'smoke/dir/hello.txt' <<<"$listing"; then
  echo "test.sh: the shaded jar smoke test failed:" >&2
  cat "$work/shell.log" >&2
  exit 1
fi

# A file over several 1 MiB blocks: the data path through the dev server's worker, read back
# short-circuit (the worker runs on this host).
head -c $((5 * 1024 * 1024 + 4321)) /dev/urandom > "$work/big.bin"
fs -D fs.strata.block.size=1m -put "$work/big.bin" strata://default/smoke/big.bin
fs -cat strata://default/smoke/big.bin > "$work/big.out"
blocksize=$(fs -stat %o strata://default/smoke/big.bin)
if ! cmp -s "$work/big.bin" "$work/big.out" || [ "$blocksize" != 1048576 ]; then
  echo "test.sh: the multi-block put/cat failed (block size $blocksize):" >&2
  cmp "$work/big.bin" "$work/big.out" >&2 || true
  cat "$work/shell.log" >&2
  exit 1
fi
workers=$("$BIN" admin workers --meta "$addr" --token-file "$work/data/token")
sc=$(awk 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "SC-READ") col = i } NR == 2 { print $col }' <<<"$workers")
if [ -z "$sc" ] || [ "$sc" = 0B ]; then
  echo "test.sh: the multi-block cat did not read short-circuit:" >&2
  echo "$workers" >&2
  exit 1
fi
# Quotas, extended attributes and ACLs: hadoop fs with the shaded jar prints what strata fs
# prints, byte for byte (TestStrataGovernanceShell compares every command in-process).
"$BIN" admin quota set --names 100 --space 10g --meta "$addr" --token-file "$work/data/token" \
  strata://default/smoke
fs -setfattr -n user.k -v v strata://default/smoke/dir/hello.txt
fs -setfacl -m user:alice:r-x,default:user:bob:rwx strata://default/smoke/dir
for cmd in "-count -q -v strata://default/smoke" "-getfattr -R -d strata://default/smoke" \
    "-getfacl -R strata://default/smoke" "-ls strata://default/smoke"; do
  # shellcheck disable=SC2086 # the command's words
  hadoop_out=$(fs $cmd)
  # shellcheck disable=SC2086
  strata_out=$("$BIN" fs --meta "$addr" --token-file "$work/data/token" $cmd)
  if [ "$hadoop_out" != "$strata_out" ]; then
    echo "test.sh: hadoop fs $cmd with the shaded jar and strata fs differ:" >&2
    diff <(echo "$hadoop_out") <(echo "$strata_out") >&2 || true
    exit 1
  fi
done

echo "test.sh: shaded jar OK (every class relocated; hadoop fs works with Hadoop's jars + the shaded jar;"
echo "  a 5 MiB file of 1 MiB blocks went through the worker and came back short-circuit: SC-READ $sc;
  quotas, xattrs and ACLs print as strata fs prints them)"
