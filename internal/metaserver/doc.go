// Package metaserver is the namespace service: one member of a Raft group
// serving MetaService. Mutations become commands in the Raft log and are
// answered once applied; reads are served from the applied state. It does
// not store file data.
//
// It is a small core and parts around it (docs/architecture.md):
//
//   - the replica (replica.go, propose.go, apply.go): the Raft node and the
//     applied state; it proposes, waits for the apply, reads at the applied
//     index, and says who leads;
//   - the table of each operation's service-side steps (steps.go): what
//     the service does for an operation besides the state machine's part,
//     admit, prepare (a cache-mode bucket side), grant (block tokens) and
//     finish, carried out for every call by call.go and batch.go;
//   - the parts, each behind the narrow interface it owns: auth (tokens
//     and block tokens), membership, upkeep (the leader's periodic jobs),
//     internal/cachemode (the bucket side), and here leases and workers;
//   - Server, the gRPC surface: a handler per method, one line each.
//
// The namespace's own rules are internal/statemachine's, which this
// package reaches through its table and read functions, never
// internal/namespace directly.
package metaserver
