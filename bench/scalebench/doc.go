// Package scalebench is strata bench scale: one namespace service member
// filled, through the import path (internal/nsimport), with synthetic trees
// shaped as seed 002's warehouse, to each of several sizes, and measured at
// each: the metadata operations of strata bench meta, memory and disk per
// file, restarts clean and after kill -9, ls -R and count of the seed's
// samples, and the import's own rate. It prints one table, and writes it,
// with a projection to a billion files, to docs/benchmarks.md.
package scalebench
