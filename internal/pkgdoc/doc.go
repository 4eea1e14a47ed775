// Package pkgdoc holds the repository-wide check that every Go package has a
// doc comment saying what it is (STYLE.md rule 1). It has no code.
package pkgdoc
