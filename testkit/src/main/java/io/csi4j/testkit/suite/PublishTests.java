package io.csi4j.testkit.suite;

import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.CREATE_DELETE_VOLUME;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.PUBLISH_READONLY;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.PUBLISH_UNPUBLISH_VOLUME;
import static io.csi4j.testkit.suite.Verdicts.check;
import static io.csi4j.testkit.suite.Verdicts.fails;
import static io.csi4j.testkit.suite.Verdicts.ok;
import static io.csi4j.testkit.suite.Verdicts.okOr;

import io.csi4j.proto.csi.ControllerPublishVolumeRequest;
import io.csi4j.proto.csi.ControllerPublishVolumeResponse;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.Volume;
import io.grpc.Status;
import java.util.List;
import io.csi4j.proto.csi.ControllerGetVolumeRequest;
import io.csi4j.proto.csi.ControllerServiceCapability;
import io.csi4j.proto.csi.NodeGetInfoRequest;
import io.csi4j.proto.csi.VolumeCapability;

/** ControllerPublishVolume and ControllerUnpublishVolume. */
final class PublishTests {
    private PublishTests() {}

    static final String CONTROLLER = ControllerTests.CONTROLLER;

    static List<SanityTest> tests() {
        Catalog c = new Catalog();
        publish(c);
        unpublish(c);
        return c.tests();
    }

    static ControllerPublishVolumeRequest.Builder publishRequest(TestContext ctx, Volume v) {
        return ControllerPublishVolumeRequest.newBuilder()
                .setVolumeId(v.getVolumeId())
                .setNodeId(ctx.nodeId())
                .setVolumeCapability(ctx.capability())
                .setReadonly(false)
                .putAllSecrets(ctx.secrets())
                .putAllVolumeContext(v.getVolumeContextMap());
    }

    static ControllerUnpublishVolumeRequest unpublishRequest(TestContext ctx, String volumeId) {
        return ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(volumeId).setNodeId(ctx.nodeId()).putAllSecrets(ctx.secrets()).build();
    }

    /** Publishes and registers the unpublish. */
    static ControllerPublishVolumeResponse controllerPublish(TestContext ctx, Volume v) {
        ControllerPublishVolumeResponse answer = ok("ControllerPublishVolume MUST succeed for an existing volume and this node's node_id",
                () -> ctx.controller().controllerPublishVolume(publishRequest(ctx, v).build()));
        Limits.map(answer.getPublishContextMap(), "ControllerPublishVolumeResponse.publish_context");
        ctx.cleanup().add(Cleanup.Stage.CONTROLLER_UNPUBLISH, "ControllerUnpublishVolume " + v.getVolumeId(),
                () -> ctx.controller().controllerUnpublishVolume(unpublishRequest(ctx, v.getVolumeId())));
        return answer;
    }

    /** With LIST_VOLUMES_PUBLISHED_NODES, the volume's published_node_ids no longer name this node. */
    static void expectUnpublished(TestContext ctx, Volume v, String rule) {
        if (!ctx.caps().has(ControllerServiceCapability.RPC.Type.LIST_VOLUMES_PUBLISHED_NODES)) return;
        List<String> nodes;
        if (ctx.caps().has(ControllerServiceCapability.RPC.Type.GET_VOLUME)) {
            nodes = ok("ControllerGetVolume MUST succeed for an existing volume", () -> ctx.controller().controllerGetVolume(
                    ControllerGetVolumeRequest.newBuilder().setVolumeId(v.getVolumeId()).build())).getStatus().getPublishedNodeIdsList();
        } else if (ctx.caps().has(ControllerServiceCapability.RPC.Type.LIST_VOLUMES)) {
            nodes = Listing.volumes(ctx).stream().filter(e -> e.getVolume().getVolumeId().equals(v.getVolumeId()))
                    .flatMap(e -> e.getStatus().getPublishedNodeIdsList().stream()).toList();
        } else {
            return;
        }
        check(!nodes.contains(ctx.nodeId()), rule, () -> "published_node_ids still " + nodes);
    }

    private static void publish(Catalog c) {
        Requirement publish = Requirement.controller(CREATE_DELETE_VOLUME, PUBLISH_UNPUBLISH_VOLUME);
        String p = CONTROLLER + "ControllerPublishVolume";

        c.add(p + "/publishes to this node and repeated identical calls answer OK", publish, ctx -> {
            Volume v = ctx.createVolume("cpublish");
            ControllerPublishVolumeResponse first = controllerPublish(ctx, v);
            for (int i = 1; i < ctx.repeats(); i++) {
                ControllerPublishVolumeResponse again = ok(
                        "ControllerPublishVolume MUST be idempotent: a volume already published to the node with compatible arguments MUST reply OK",
                        () -> ctx.controller().controllerPublishVolume(publishRequest(ctx, v).build()));
                check(again.getPublishContextMap().equals(first.getPublishContextMap()),
                        "ControllerPublishVolumeResponse.publish_context SHALL NOT be mutable",
                        () -> again.getPublishContextMap() + " after " + first.getPublishContextMap());
            }
        });

        c.add(p + "/a volume that does not exist fails with NOT_FOUND", Requirement.controller(PUBLISH_UNPUBLISH_VOLUME), ctx -> {
            var request = ControllerPublishVolumeRequest.newBuilder().setVolumeId(ctx.name("no-such-volume")).setNodeId(ctx.nodeId())
                    .setVolumeCapability(ctx.capability()).putAllSecrets(ctx.secrets()).build();
            fails(Status.Code.NOT_FOUND, "ControllerPublishVolume: a volume that does not exist MUST fail with NOT_FOUND", () -> {
                var answer = ctx.controller().controllerPublishVolume(request);
                ctx.cleanup().add(Cleanup.Stage.CONTROLLER_UNPUBLISH, "ControllerUnpublishVolume " + request.getVolumeId(),
                        () -> ctx.controller().controllerUnpublishVolume(unpublishRequest(ctx, request.getVolumeId())));
                return answer;
            });
        });

        c.add(p + "/a node that does not exist fails with NOT_FOUND", publish, ctx -> {
            Volume v = ctx.createVolume("cpublish");
            String node = ctx.name("no-such-node");
            fails(Status.Code.NOT_FOUND, "ControllerPublishVolume: a node that does not exist MUST fail with NOT_FOUND", () -> {
                var answer = ctx.controller().controllerPublishVolume(publishRequest(ctx, v).setNodeId(node).build());
                ctx.cleanup().add(Cleanup.Stage.CONTROLLER_UNPUBLISH, "ControllerUnpublishVolume " + v.getVolumeId() + " from " + node,
                        () -> ctx.controller().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder()
                                .setVolumeId(v.getVolumeId()).setNodeId(node).putAllSecrets(ctx.secrets()).build()));
                return answer;
            });
        });

        c.add(p + "/publishing again with a different readonly flag fails with ALREADY_EXISTS",
                Requirement.controller(CREATE_DELETE_VOLUME, PUBLISH_UNPUBLISH_VOLUME, PUBLISH_READONLY), ctx -> {
                    Volume v = ctx.createVolume("cpublish");
                    controllerPublish(ctx, v);
                    fails(Status.Code.ALREADY_EXISTS,
                            "ControllerPublishVolume: a volume published to the node but incompatible with the readonly flag MUST fail with ALREADY_EXISTS",
                            () -> ctx.controller().controllerPublishVolume(publishRequest(ctx, v).setReadonly(true).build()));
                });

        c.add(p + "/publishing again with a different access mode fails with ALREADY_EXISTS", publish, ctx -> {
            Volume v = ctx.createVolume("cpublish");
            controllerPublish(ctx, v);
            var other = ctx.capability(VolumeCapability.AccessMode.Mode.SINGLE_NODE_READER_ONLY);
            fails(Status.Code.ALREADY_EXISTS,
                    "ControllerPublishVolume: a volume published to the node but incompatible with the specified volume_capability MUST fail with ALREADY_EXISTS",
                    () -> ctx.controller().controllerPublishVolume(publishRequest(ctx, v).setVolumeCapability(other).build()));
        });

        c.add(p + "/a volume_capability the volume does not support is refused", publish, ctx -> {
            Volume v = ctx.createVolume("cpublish");
            var other = ControllerTests.unsupportedCapability(ctx, v);
            Verdicts.failsWithOneOf("ControllerPublishVolume: the SP MUST ensure the CO can use the published volume as described, otherwise"
                            + " MUST return an error (INVALID_ARGUMENT: unsupported field, or FAILED_PRECONDITION: exceeds capabilities)", () -> {
                        var answer = ctx.controller().controllerPublishVolume(publishRequest(ctx, v).setVolumeCapability(other).build());
                        ctx.cleanup().add(Cleanup.Stage.CONTROLLER_UNPUBLISH, "ControllerUnpublishVolume " + v.getVolumeId(),
                                () -> ctx.controller().controllerUnpublishVolume(unpublishRequest(ctx, v.getVolumeId())));
                        return answer;
                    }, Status.Code.INVALID_ARGUMENT, Status.Code.FAILED_PRECONDITION);
        });

        c.add(p + "/beyond max_volumes_per_node fails with RESOURCE_EXHAUSTED", publish, ctx -> {
            long max = ok("NodeGetInfo MUST succeed", () -> ctx.node().nodeGetInfo(NodeGetInfoRequest.getDefaultInstance()))
                    .getMaxVolumesPerNode();
            if (max < 1 || max > 8) TestContext.notApplicable("NodeGetInfo reports max_volumes_per_node " + max + " (the test needs 1 to 8)");
            for (int i = 0; i <= max; i++) {
                Volume v = ctx.createVolume("cpublish" + i);
                int index = i;
                Status.Code got = Verdicts.okOr("ControllerPublishVolume MUST succeed below max_volumes_per_node, and MUST fail with RESOURCE_EXHAUSTED at it", () -> {
                    var answer = ctx.controller().controllerPublishVolume(publishRequest(ctx, v).build());
                    ctx.cleanup().add(Cleanup.Stage.CONTROLLER_UNPUBLISH, "ControllerUnpublishVolume " + v.getVolumeId(),
                            () -> ctx.controller().controllerUnpublishVolume(unpublishRequest(ctx, v.getVolumeId())));
                    return answer;
                }, Status.Code.RESOURCE_EXHAUSTED);
                if (got == Status.Code.RESOURCE_EXHAUSTED) return;
                check(index < max, "ControllerPublishVolume: when the maximum of volumes per node is attached, MUST fail with RESOURCE_EXHAUSTED",
                        () -> "OK for volume " + (index + 1) + " with max_volumes_per_node " + max);
            }
        });

        c.missing(p, "volume_id", Requirement.controller(PUBLISH_UNPUBLISH_VOLUME), ctx -> () -> ctx.controller().controllerPublishVolume(
                ControllerPublishVolumeRequest.newBuilder().setNodeId(ctx.nodeId()).setVolumeCapability(ctx.capability()).putAllSecrets(ctx.secrets()).build()));
        c.missing(p, "node_id", publish, ctx -> {
            Volume v = ctx.createVolume("cpublish");
            return () -> ctx.controller().controllerPublishVolume(publishRequest(ctx, v).clearNodeId().build());
        });
        c.missing(p, "volume_capability", publish, ctx -> {
            Volume v = ctx.createVolume("cpublish");
            return () -> ctx.controller().controllerPublishVolume(publishRequest(ctx, v).clearVolumeCapability().build());
        });
    }

    private static void unpublish(Catalog c) {
        Requirement publish = Requirement.controller(CREATE_DELETE_VOLUME, PUBLISH_UNPUBLISH_VOLUME);
        String p = CONTROLLER + "ControllerUnpublishVolume";

        c.add(p + "/unpublishes and repeated calls answer OK", publish, ctx -> {
            Volume v = ctx.createVolume("cunpublish");
            ok("ControllerPublishVolume MUST succeed for an existing volume and this node's node_id",
                    () -> ctx.controller().controllerPublishVolume(publishRequest(ctx, v).build()));
            Cleanup.Handle unpublish = ctx.cleanup().add(Cleanup.Stage.CONTROLLER_UNPUBLISH, "ControllerUnpublishVolume " + v.getVolumeId(),
                    () -> ctx.controller().controllerUnpublishVolume(unpublishRequest(ctx, v.getVolumeId())));
            for (int i = 0; i < ctx.repeats(); i++) {
                int attempt = i;
                ok(attempt == 0 ? "ControllerUnpublishVolume MUST succeed for a published volume"
                                : "ControllerUnpublishVolume MUST be idempotent: a volume not attached to the node MUST reply OK",
                        () -> ctx.controller().controllerUnpublishVolume(unpublishRequest(ctx, v.getVolumeId())));
                unpublish.done();
            }
            expectUnpublished(ctx, v, "ControllerUnpublishVolume with node_id: the SP MUST unpublish the volume from the specified node");
        });

        c.add(p + "/without node_id unpublishes the volume from every node", publish, ctx -> {
            Volume v = ctx.createVolume("cunpublish");
            ok("ControllerPublishVolume MUST succeed for an existing volume and this node's node_id",
                    () -> ctx.controller().controllerPublishVolume(publishRequest(ctx, v).build()));
            ctx.cleanup().add(Cleanup.Stage.CONTROLLER_UNPUBLISH, "ControllerUnpublishVolume " + v.getVolumeId(),
                    () -> ctx.controller().controllerUnpublishVolume(unpublishRequest(ctx, v.getVolumeId())));
            ok("ControllerUnpublishVolume MUST succeed without node_id (it is OPTIONAL)",
                    () -> ctx.controller().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder()
                            .setVolumeId(v.getVolumeId()).putAllSecrets(ctx.secrets()).build()));
            // the cleanup unpublishes again with node_id: idempotent, and it undoes what a faulty plugin kept
            expectUnpublished(ctx, v, "ControllerUnpublishVolume without node_id: the SP MUST unpublish the volume from all nodes it is published to");
        });

        c.add(p + "/a volume that was never published answers OK", publish, ctx -> {
            Volume v = ctx.createVolume("cunpublish");
            ok("ControllerUnpublishVolume: if the volume is not attached to the node the Plugin MUST reply OK",
                    () -> ctx.controller().controllerUnpublishVolume(unpublishRequest(ctx, v.getVolumeId())));
        });

        c.add(p + "/a volume that does not exist answers OK or NOT_FOUND", Requirement.controller(PUBLISH_UNPUBLISH_VOLUME), ctx ->
                okOr("ControllerUnpublishVolume: a volume that cannot be found SHOULD reply OK, or NOT_FOUND if not assumed unpublished",
                        () -> ctx.controller().controllerUnpublishVolume(unpublishRequest(ctx, ctx.name("no-such-volume"))),
                        Status.Code.NOT_FOUND));

        c.add("Controller/DeleteVolume/a controller-published volume is deleted, or refused with FAILED_PRECONDITION", publish, ctx -> {
            Volume v = ctx.createVolume("in-use");
            ok("ControllerPublishVolume MUST succeed for an existing volume and this node's node_id",
                    () -> ctx.controller().controllerPublishVolume(publishRequest(ctx, v).build()));
            Cleanup.Handle unpublish = ctx.cleanup().add(Cleanup.Stage.CONTROLLER_UNPUBLISH, "ControllerUnpublishVolume " + v.getVolumeId(),
                    () -> ctx.controller().controllerUnpublishVolume(unpublishRequest(ctx, v.getVolumeId())));
            Status.Code got = okOr("DeleteVolume: a volume that cannot be deleted because it is in use MUST fail with FAILED_PRECONDITION",
                    () -> ctx.controller().deleteVolume(ControllerTests.delete(ctx, v.getVolumeId())), Status.Code.FAILED_PRECONDITION);
            if (got == Status.Code.OK) {
                ctx.forgetVolume(v.getVolumeId());
                unpublish.done();
                okOr("ControllerUnpublishVolume of a deleted volume SHOULD reply OK (NOT_FOUND if not assumed unpublished)",
                        () -> ctx.controller().controllerUnpublishVolume(unpublishRequest(ctx, v.getVolumeId())), Status.Code.NOT_FOUND);
            } else if (ctx.caps().has(ControllerServiceCapability.RPC.Type.GET_VOLUME)) {
                ok("DeleteVolume refused with FAILED_PRECONDITION leaves the volume as it was",
                        () -> ctx.controller().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(v.getVolumeId()).build()));
            }
        });

        c.missing(p, "volume_id", Requirement.controller(PUBLISH_UNPUBLISH_VOLUME), ctx -> () -> ctx.controller().controllerUnpublishVolume(
                ControllerUnpublishVolumeRequest.newBuilder().setNodeId(ctx.nodeId()).putAllSecrets(ctx.secrets()).build()));
    }
}
