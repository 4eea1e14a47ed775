// Package statemachine is the namespace service's replicated state machine:
// it applies the commands of the Raft log to a kv transaction and answers
// reads from the applied state, and it holds the one table of the service's
// operations (ops.go), which says of each what it does and how the service
// carries it out: a read or a logged mutation, batchable or not, whether it
// may free blocks or leave subtrees to purge.
//
// Applying is deterministic: everything a command uses besides the state
// (the time, the caller, the namespace settings) is stamped in the command
// by the leader before it is proposed. The package does no I/O besides the
// transaction it is given, reads no clock and starts no goroutine, so that
// every replica, and a replay of the same log, computes the same state; it
// runs over kv.Mem in tests.
//
// It owns the de-duplication of retried requests (requests.go): a mutation
// carrying a request id is applied once, and its retries get the answer
// kept from then. It records the Raft membership and the applied index in
// the same transaction as the state (members.go).
//
// It is the one way in to the namespace (internal/namespace): the service's
// own reads of the state go through its read functions (service.go) too.
// Each row's result has a type of its own (a bool, an inode, a path), which
// the row's Result method returns and its Respond turns into the response.
//
// It is not the service: proposing, waiting for answers, leases, the block
// collector and the gRPC handlers are internal/metaserver's. Errors it
// returns are internal/fserr conditions; their translation to gRPC statuses
// happens once, at the service's edge.
package statemachine
