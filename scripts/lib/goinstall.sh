# go_install NAME MODULE VERSION [go install flags...]: `go install MODULE@VERSION` (a pinned
# tool the tests run) into ${STRATA_BIN:-$REPO/.cache/bin}, built in a temporary directory so that
# Strata's go.mod neither constrains nor records it; a no-op when NAME's stamp says VERSION. The
# stamp is written only after a successful build, so an interrupted one is retried, not trusted.
# Sourced by scripts/minio/install.sh and scripts/promtool/install.sh.
go_install() {
	local name=$1 module=$2 version=$3
	shift 3
	local repo bin_dir
	repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
	bin_dir="${STRATA_BIN:-$repo/.cache/bin}"
	local bin="$bin_dir/$name" stamp="$bin_dir/.$name.version"
	if [[ -x "$bin" && -f "$stamp" && "$(cat "$stamp")" == "$version" ]]; then
		echo "$name $version already installed at $bin"
		return 0
	fi
	mkdir -p "$bin_dir"
	# Keep build products out of git without touching the repo's .gitignore.
	[[ -f "$repo/.cache/.gitignore" ]] || { mkdir -p "$repo/.cache" && echo '*' >"$repo/.cache/.gitignore"; }
	local work
	work="$(mktemp -d)"
	(cd "$work" && GOBIN="$bin_dir" GOFLAGS=-buildvcs=false go install "$@" "$module@$version") || { rm -rf "$work"; return 1; }
	rm -rf "$work"
	echo "$version" >"$stamp"
	echo "$name installed at $bin"
}
