package namespace_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The namespace has one way in: the state machine, which applies its
// operations and reads it for the service, and cache mode, which reads
// what it must of a cache-mode namespace's entries. A package of the
// module that imports it besides those fails this test (tests may, for
// their setup).
func TestOnlyTheStateMachineImportsTheNamespace(t *testing.T) {
	const self = "github.com/stratafs/strata/internal/namespace"
	allowed := map[string]bool{"internal/namespace": true, "internal/statemachine": true, "internal/cachemode": true}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "java" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Ext(path) != ".go" || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == self && !allowed[filepath.ToSlash(dir)] {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s imports internal/namespace: go through internal/statemachine", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d files found under %s", checked, root)
	}
}
