/**
 * Cluster mode ({@code docs/design.md}, {@code docs/cluster.md}): a stateless controller routing CSI to node agents over
 * mutual TLS, and the agents' side of that link. The edge of the domain: gRPC and wire types live here.
 * <ul>
 *   <li>The agents: {@link io.csi4j.driver.cluster.Agents} (which agent serves which node; {@code Claims} when several
 *       say so), {@link io.csi4j.driver.cluster.Agent}, {@code Liveness}/{@code LastAnswer} (who is silent, for how
 *       long), {@code Fanout} (ask several at once), {@code AgentStatus} (the one mapper of an agent's codes).</li>
 *   <li>Routing CSI: {@link io.csi4j.driver.cluster.ControllerRouter}, {@code GroupControllerRouter}, the CSI-Addons
 *       routers, {@code Owners} and {@code Placement} (where a request or a new volume goes), {@code MergedListing} and
 *       {@code ClusterPageToken} (lists across nodes).</li>
 *   <li>Replicated volumes, controller side (issue 28, {@code docs/replication.md}):
 *       {@link io.csi4j.driver.cluster.ReplicaAnswers} (what every replica's node said, asked once; read raw or as the
 *       rules' views through {@link io.csi4j.driver.cluster.ReplicaViews}, the one wire-to-domain mapper);
 *       {@link io.csi4j.driver.cluster.Replicas} (create, modify, delete, and routing to the current primary);
 *       {@link io.csi4j.driver.cluster.PrimaryMoves} (the handoff at attach, the failover, the unpublish from a lost
 *       primary; which copy a failover may take is {@code replication/FailoverTarget}'s rule);
 *       {@link io.csi4j.driver.cluster.ClusterVolumeReplication} (CSI-Addons VolumeReplication);
 *       {@link io.csi4j.driver.cluster.ReplicationScheduler} with {@code ReplicaListings}, {@code Follow},
 *       {@code Confirm}, {@code Sweep}, {@code SnapshotDuplicates} (what each tick does); {@code LostNodes} and
 *       {@code NodeForgetting} ({@code csi4j cluster forget-node}); {@code ReplicationStatus} ({@code cluster status}).</li>
 *   <li>The agent's side: {@link io.csi4j.driver.cluster.NodeAgentService} (csi4j.cluster.v1.NodeAgent over the
 *       domain), {@code Peers}, {@code PeerPrimary} and {@code PeerSource} (agent-to-agent), {@code ProbeHeard}.</li>
 * </ul>
 */
package io.csi4j.driver.cluster;
