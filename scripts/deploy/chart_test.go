// Package deploy tests the Helm chart in deploy/helm/strata: helm lints it
// and renders it with the values a deployment sets (TLS from cert-manager,
// from a Secret given, none), and kubeconform validates what it renders,
// strictly (no field Kubernetes does not know), against schemas made from
// Kubernetes' own OpenAPI document. scripts/deploy/install.sh installs the
// three (make test does); $STRATA_HELM, $STRATA_KUBECONFORM and
// $STRATA_KUBE_OPENAPI name others.
package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// kubernetesVersion is the version whose API the chart is checked against
// (scripts/deploy/install.sh downloads it).
const kubernetesVersion = "v1.37.2"

// The chart renders, for every setting a deployment makes, manifests that
// Kubernetes' API accepts field by field; the objects the issue asks for
// are there: three members with volumes, a worker per node with its cache
// and socket directory on the node, probes on the HTTP listener, TLS.
func TestChart(t *testing.T) {
	root := repoRoot(t)
	chart := filepath.Join(root, "deploy", "helm", "strata")
	helm, kubeconform := tool(t, "STRATA_HELM", "helm"), tool(t, "STRATA_KUBECONFORM", "kubeconform")
	if out, err := exec.Command(helm, "lint", "--strict", chart).CombinedOutput(); err != nil {
		t.Fatalf("helm lint: %v\n%s", err, out)
	}
	schemas := schemaDir(t)
	for _, tc := range []struct {
		name string
		set  []string
		want []string // in what it renders
	}{
		{"TLS from a Secret", nil, []string{"kind: StatefulSet", "kind: DaemonSet", "volumeClaimTemplates:",
			"--tls-cert /tls/tls.crt", "path: /healthz", "scheme: HTTPS", "hostPath: {path: /var/run/strata",
			"--initial-cluster 1=s1-meta-0.s1-meta.data.svc.cluster.local:7700,2=s1-meta-1", "secretName: strata-worker-token"}},
		{"TLS from cert-manager", []string{"tls.certManager.issuer.kind=ClusterIssuer", "tls.certManager.issuer.name=ca"},
			[]string{"kind: Certificate", `"*.s1-meta.data.svc.cluster.local"`, `"*.data.pod.cluster.local"`}},
		{"plaintext, five members", []string{"tls.enabled=false", "meta.replicas=5"},
			[]string{"--plaintext", "scheme: HTTP}", "5=s1-meta-4.s1-meta.data.svc.cluster.local:7700"}},
	} {
		args := []string{"template", "s1", chart, "--namespace", "data"}
		for _, s := range tc.set {
			args = append(args, "--set", s)
		}
		out, err := exec.Command(helm, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: helm template: %v\n%s", tc.name, err, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s: the manifests lack %q", tc.name, w)
			}
		}
		rendered := filepath.Join(t.TempDir(), "rendered.yaml")
		if err := os.WriteFile(rendered, out, 0o644); err != nil {
			t.Fatal(err)
		}
		// NB: cert-manager's Certificate is a custom resource, whose schema
		// is cert-manager's, not Kubernetes': it alone is skipped.
		check := exec.Command(kubeconform, "-strict", "-summary", "-skip", "Certificate",
			"-schema-location", filepath.Join(schemas, "{{ .ResourceKind }}-{{ .Group }}-{{ .ResourceAPIVersion }}.json"), rendered)
		if out, err := check.CombinedOutput(); err != nil {
			t.Errorf("%s: kubeconform: %v\n%s", tc.name, err, out)
		} else {
			t.Logf("%s: %s", tc.name, strings.TrimSpace(string(out)))
		}
	}
}

// A manifest with a field Kubernetes does not know, or a value of the wrong
// type, fails the check: the schemas are strict.
func TestSchemasAreStrict(t *testing.T) {
	kubeconform := tool(t, "STRATA_KUBECONFORM", "kubeconform")
	schemas := schemaDir(t)
	for _, tc := range []struct{ name, manifest, says string }{
		{"an unknown field", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {ports: [{port: 1}], clusterIp: None}\n",
			"additional properties 'clusterIp' not allowed"},
		{"a wrong type", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: x}\nspec: {replicas: three, selector: {}, template: {}}\n",
			"replicas"},
	} {
		name, manifest := tc.name, tc.manifest
		f := filepath.Join(t.TempDir(), "bad.yaml")
		if err := os.WriteFile(f, []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(kubeconform, "-strict", "-schema-location",
			filepath.Join(schemas, "{{ .ResourceKind }}-{{ .Group }}-{{ .ResourceAPIVersion }}.json"), f).CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.says) {
			t.Errorf("%s: kubeconform said (%v), not %q:\n%s", name, err, tc.says, out)
		}
	}
}

// schemaDir makes kubeconform's schemas from Kubernetes' OpenAPI document:
// one file per kind, named as the test's -schema-location says, each the
// kind's definition with every definition it refers to, strict (an object
// with properties takes no others), and the two types the document
// describes as strings but that take numbers too (IntOrString, Quantity)
// as either, as kubeconform's own schemas have them.
func schemaDir(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(openAPI(t))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"io.k8s.apimachinery.pkg.util.intstr.IntOrString", "io.k8s.apimachinery.pkg.api.resource.Quantity"} {
		doc.Definitions[name] = map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}
	}
	for _, d := range doc.Definitions {
		if _, ok := d["properties"]; ok && d["additionalProperties"] == nil && d["x-kubernetes-preserve-unknown-fields"] == nil {
			d["additionalProperties"] = false
		}
	}
	dir := t.TempDir()
	for name, d := range doc.Definitions {
		gvks, _ := d["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			gvk, _ := g.(map[string]any)
			group, version, kind := gvk["group"].(string), gvk["version"].(string), gvk["kind"].(string)
			if group == "" {
				group = version // kubeconform's {{ .Group }} of "v1"
			}
			schema := map[string]any{"$ref": "#/definitions/" + name, "definitions": closure(doc.Definitions, name)}
			out, err := json.Marshal(schema)
			if err != nil {
				t.Fatal(err)
			}
			file := fmt.Sprintf("%s-%s-%s.json", strings.ToLower(kind), group, version)
			if err := os.WriteFile(filepath.Join(dir, file), out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

var refRE = regexp.MustCompile(`"#/definitions/([^"]+)"`)

// closure returns the definitions name refers to, itself among them.
func closure(defs map[string]map[string]any, name string) map[string]any {
	out := map[string]any{}
	todo := []string{name}
	for len(todo) > 0 {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if _, done := out[n]; done || defs[n] == nil {
			continue
		}
		out[n] = defs[n]
		b, _ := json.Marshal(defs[n])
		for _, m := range refRE.FindAllSubmatch(b, -1) {
			todo = append(todo, string(m[1]))
		}
	}
	return out
}

// openAPI is Kubernetes' OpenAPI document, from the module cache
// (scripts/deploy/install.sh downloads it), or $STRATA_KUBE_OPENAPI.
func openAPI(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("STRATA_KUBE_OPENAPI"); p != "" {
		return p
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(strings.TrimSpace(string(out)), "k8s.io", "kubernetes@"+kubernetesVersion, "api", "openapi-spec", "swagger.json")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no Kubernetes OpenAPI document at %s: run scripts/deploy/install.sh (make test does), or set STRATA_KUBE_OPENAPI", p)
	}
	return p
}

// tool is the binary scripts/deploy/install.sh installs as name, or $env.
func tool(t *testing.T, env, name string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	p := filepath.Join(repoRoot(t), ".cache", "bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no %s at %s: run scripts/deploy/install.sh (make test does), or set %s", name, p, env)
	}
	return p
}

func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}
