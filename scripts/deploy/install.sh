#!/usr/bin/env bash
# Installs what the Helm chart's test (scripts/deploy/chart_test.go) runs:
# helm, which renders deploy/helm/strata, and kubeconform, which validates
# what it renders against Kubernetes' own API schemas, both built from source
# with `go install` at pinned versions into .cache/bin, and Kubernetes' OpenAPI
# document (api/openapi-spec/swagger.json of the k8s.io/kubernetes module, at
# the pinned version, into Go's module cache), from which the test makes
# kubeconform's schemas: kubeconform's own schemas are downloaded from GitHub
# at run time, which the tests may not do.
#
# A first run on 2 cores with Go's caches empty: a few minutes of downloading
# and compiling helm's modules, and about 20 MiB for the OpenAPI document's
# module; then a no-op.
#
# Usage: scripts/deploy/install.sh
#   env STRATA_BIN overrides the bin dir (then point STRATA_HELM and
#   STRATA_KUBECONFORM at the binaries there).
set -euo pipefail

readonly HELM_VERSION="v3.22.0"
readonly KUBECONFORM_VERSION="v0.8.0"
readonly KUBERNETES_VERSION="v1.37.2" # keep in step with kubernetesVersion in chart_test.go
# shellcheck source=../lib/goinstall.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/goinstall.sh"
echo "helm $HELM_VERSION, kubeconform $KUBECONFORM_VERSION and Kubernetes $KUBERNETES_VERSION's API schemas (a few minutes the first time)"
go_install helm helm.sh/helm/v3/cmd/helm "$HELM_VERSION"
go_install kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && GOFLAGS=-mod=mod go mod download k8s.io/kubernetes@"$KUBERNETES_VERSION")
