package raftnode

import pb "go.etcd.io/raft/v3/raftpb"

// Sender carries a node's messages to the other members, and theirs to it:
// it is all the node needs of a network. Transport implements it over gRPC;
// MemNetwork, in one process, for tests, with partitions and losses.
//
// Sending. The node calls Send from its loop, one call at a time, so Send
// must not block: it queues and returns. The messages are the Sender's to
// read from then on, never to modify: their entries are shared with the
// node's log. Delivery is best effort, as Raft expects of a network: a
// message may be lost, and raft resends what matters. Messages to one member
// should go in order (reordering costs raft rejections and resends). A
// message the Sender knows it could not deliver (the member is unknown or
// unreachable, or its queue is full) it reports with
// Node.ReportUnreachable, so that raft probes that member instead of
// streaming to it.
//
// Snapshots. A MsgSnap message asks for the state itself: the Sender writes
// a checkpoint of the sender's state machine (StateMachine.Checkpoint),
// delivers its files to the member, and reports the outcome with
// Node.ReportSnapshot; raft sends that member nothing else meanwhile.
//
// Receiving. The Sender steps messages for its member into the node it is
// attached to (Node.Step). A MsgSnap is stepped once its files are all
// there, in a directory of their own whose name begins with receivedName
// of the snapshot's index (the node drops those of its parent that are no
// newer once it restored one), with the message's Snapshot.Data set to that
// directory's path: the node hands it to StateMachine.Restore.
type Sender interface {
	Send(msgs []*pb.Message)
}
