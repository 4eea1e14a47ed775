// Package metabench is the engine of "strata bench meta": an NNBench-style
// metadata benchmark that drives the namespace service through the Go client
// library, the way an application would, and reports throughput and latency
// percentiles per operation and thread count.
//
// For each thread count, every thread works in a directory of its own (as
// NNBench does) and the phases run one after another, each over the same
// total number of operations split evenly between the threads:
//
//	mkdir      Mkdirs of a fresh directory
//	create        WriteFile of an empty file: one call, the file closed
//	              (NNBench create_write, 0 bytes)
//	createstream  Create + Close of an empty file: two calls, the way a
//	              writer that streams (and Hadoop's create) does it
//	create512     WriteFile of 512 B: one call, the content stored inline
//	stat       GetFileStatus of each file of the current file set
//	open       Open + read of each file of the current set (NNBench open_read)
//	list       listStatus of each thread's directory, whole (all pages)
//	rename     Rename of each file of the current set to a new name
//	delete     Delete of each file of the current set
//
// The "current file set" is what the last create phase of any kind made
// (renamed by rename, gone after delete). A phase that needs files when
// there are none is preceded by an untimed create; see plan.
//
// Latencies are recorded per thread in HdrHistogram (no shared lock on the
// hot path) and merged when the phase ends. Throughput is operations over
// the phase's wall time, from the moment all threads are released to the
// moment the last one finishes.
//
// What it is not: a test. Nothing here asserts timings; the numbers depend
// on the machine and on where the service runs. It also does no data path
// I/O beyond inline content.
package metabench
