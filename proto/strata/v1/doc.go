// Package stratav1 is Strata's wire contract, generated from the .proto files
// beside it by `make generate` (buf): the MetaService of the namespace
// service, the WorkerService of the workers, the short-circuit messages, and
// the Command format of the namespace service's Raft log. Do not edit the
// generated files; edit the .proto files and regenerate.
package stratav1
