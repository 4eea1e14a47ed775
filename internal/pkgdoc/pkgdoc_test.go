package pkgdoc

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryPackageHasADoc fails for each package directory of the module
// whose non-test files carry no package comment.
func TestEveryPackageHasADoc(t *testing.T) {
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
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "java" || name == "python" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Ext(path) != ".go" || strings.HasSuffix(path, "_test.go") || !isFirstGoFile(path) {
			return nil
		}
		checked++
		if !dirHasDoc(t, filepath.Dir(path)) {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			t.Errorf("package in %s has no doc comment", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("only %d packages found under %s", checked, root)
	}
}

// isFirstGoFile reports whether path is the first non-test Go file of its
// directory, so that each directory is checked once.
func isFirstGoFile(path string) bool {
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return false
	}
	for _, e := range entries {
		n := e.Name()
		if filepath.Ext(n) == ".go" && !strings.HasSuffix(n, "_test.go") {
			return n == filepath.Base(path)
		}
	}
	return false
}

func dirHasDoc(t *testing.T, dir string) bool {
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	for _, p := range pkgs {
		for _, f := range p.Files {
			if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
				return true
			}
		}
	}
	return false
}
