/**
 * Replicated volumes (issue 28, {@code docs/replication.md}), an agent's side:
 * <ul>
 *   <li>{@link io.csi4j.driver.volume.ReplicationParameters} (in volume, which validates every StorageClass parameter): what a StorageClass asks (replicas, interval);</li>
 *   <li>{@link io.csi4j.driver.replication.ReplicaState} and {@link io.csi4j.driver.replication.ReplicaStates}: each
 *       replica's epoch, role and held point, durable on its node before any answer that depends on it, with the
 *       transitions that keep one primary per epoch (promote strictly above every epoch the node knows, fail over a
 *       held point with the note the volume condition reports, fence on learning a higher one, follow the primary of a
 *       higher epoch: a secondary keeping its point, a fenced copy holding none), and the tombstones of
 *       volumes deleted while a peer did not answer (the controller sweeps that peer's leftover: cluster/Sweep); its
 *       per-volume locks ({@link io.csi4j.driver.replication.VolumeLocks}) live only while held or waited on;</li>
 *   <li>{@link io.csi4j.driver.replication.ForgottenNodes}: the nodes an operator declared permanently lost
 *       ({@code csi4j cluster forget-node}), durable here so the controller stays stateless (its rules: cluster/LostNodes);</li>
 *   <li>{@link io.csi4j.driver.replication.PrimaryConfirmations}: in memory, which primaries here the controller
 *       confirmed since this node may last have been away (agent start, no controller heartbeat for the failover
 *       delay less 3 s: it may hear the controller after the controller's last answer); an unconfirmed one
 *       refuses a new writable stage or publish (UNAVAILABLE), so a returning old primary
 *       whose successor is silent cannot fork the successor's writes away ({@code Rounds.confirm} confirms);</li>
 *   <li>{@link io.csi4j.driver.replication.PointRetention}: which of the primary's points a round may drop (none that
 *       a secondary holds) and the base of a secondary's pull;</li>
 *   <li>{@link io.csi4j.driver.replication.Rounds}: both sides of a round under the volume's replication lock
 *       ({@code ReplicaStates.exclusively}, which a writable stage or publish also holds from its role check to its mount
 *       ({@code ReplicaStates.whileWritable}), so a demote or fence never slips between them: review s10, F1) (the primary cuts
 *       an internal point, the secondary pulls the delta and replaces its copy whole, or writes it into its image under a journal
 *       (docs/inplace-rounds.md section 1); never under a mount: the engine's
 *       commit looks for loop devices and renames atomically with a stage, so a read-only stage of the secondary meanwhile
 *       makes the round FAILED_PRECONDITION), the handoff's demotion and
 *       promotion, a failover's promotion, fencing (the state durably, then the mounts, and a block volume's loop device, read-only through the
 *       engine's {@code WriteFence}, before the answer; again at start-up for every FENCED copy), following a new
 *       primary's epoch ({@code follow}: a fenced copy only once no mount uses it; {@code list} says a fenced copy is
 *       in use, so the controller does not ask it each tick), and the deletion of
 *       a replica that no round can undo; what each replica here is for {@code csi4j cluster status}
 *       ({@code status}), and on a primary the condition of a secondary that stopped getting points for two
 *       intervals ({@code lagCondition}); and, at the agent's start, finishing a round applied in place that a crash
 *       stopped after its journal was complete, or making a copy whose journal is bad hold no point
 *       ({@code replayJournals}, docs/inplace-rounds.md 1.3; also before each round and failover, for a commit that
 *       failed mid-apply; {@link io.csi4j.driver.replication.JournalReplay} records what the engine's replay did), then
 *       finishing a round a crash stopped between keeping its new replica and recording its point
 *       ({@code finishCutShort}, {@code docs/power-cut.md}, finding 5). What it remembers of a volume in memory (lag
 *       start, rounds' timing) goes with the volume's replica ({@code delete}, or the next {@code list} once the state
 *       file is gone).</li>
 *   <li>{@link io.csi4j.driver.replication.RoundLog}: each secondary's last complete round here (lag, last sync,
 *       bytes, duration), durable beside the replica's state ({@code <volume>.round}) and loaded at start, for the agent's metrics, {@code csi4j cluster status} and CSI-Addons GetVolumeReplicationInfo.</li>
 *   <li>{@link io.csi4j.driver.replication.FailoverTarget}: which copy a failover may promote (an answering secondary
 *       holding a point no other answering secondary's is newer than, whatever epoch either knows), for every path:
 *       ControllerPublishVolume, the unpublish from a lost primary, CSI-Addons Promote(force);</li>
 *   <li>{@link io.csi4j.driver.replication.HandoffPastSilence}: whether a handoff may go on while nodes of the set are
 *       silent (past nodes the confirmed primary's failover note names, or the list a handoff past them carried to it,
 *       {@code ReplicaState.replaced}; or to complete a handoff in progress), with
 *       {@link io.csi4j.driver.replication.FailoverNote}, the note a failover writes and the rule reads;</li>
 *   <li>{@link io.csi4j.driver.replication.VolumeReplication} and {@link io.csi4j.driver.replication.ReplicationRules}:
 *       CSI-Addons VolumeReplication within one cluster (Enable/Disable, Promote/Demote, Resync, last round), decided
 *       from what every replica's node says; carried out by the cluster controller ({@code cluster/ClusterVolumeReplication}).</li>
 * </ul>
 * The replica set itself is named by its id ({@code id/ReplicatedVolumeId}). Domain code only: no gRPC, no wire types.
 */
package io.csi4j.driver.replication;
