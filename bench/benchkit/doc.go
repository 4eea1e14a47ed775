// Package benchkit is what Strata's benchmark drivers share for their
// reports: the description of the machine a run took place on (Machine),
// per-goroutine latency recorders merged into percentiles (Recorder,
// Summarize), the median of rounds, and the layout of aligned text tables
// (AlignRows). bench/databench, bench/metabench and "strata bench failover"
// use it, so that their headers and tables read alike ("strata server
// --dev" also prints DiskFree of its data directory).
//
// What it is not: a benchmark framework. It runs and times nothing itself,
// and it does not decide what a report holds, which columns a table has or
// how its JSON looks: each driver keeps its own report, because their
// outputs are compared across runs and docs/benchmarks.md quotes them.
package benchkit
