package io.csi4j.cli.call;

import static io.csi4j.cli.call.ControllerCommand.orEmpty;

import io.csi4j.cli.output.View;
import io.csi4j.proto.addons.volumegroup.*;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code csi4j vg}: the CSI-Addons VolumeGroup controller, on the CSI-Addons endpoint. */
@Command(name = "vg", description = "CSI-Addons volume groups (on the CSI-Addons endpoint): create, modify membership, get, list, delete.")
public final class VolumeGroupCommand {

    @Command(name = "create", description = "CreateVolumeGroup NAME [--volume-id ID...] (idempotent by name).")
    int create(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
               @Parameters(paramLabel = "NAME", description = "The group's name (the idempotency key)") String name,
               @Option(names = "--volume-id", paramLabel = "ID", description = "A member volume (repeatable)") List<String> volumes,
               @Option(names = "--param", paramLabel = "KEY=VALUE", description = "A VolumeGroupClass parameter (repeatable)") Map<String, String> params) {
        var req = CreateVolumeGroupRequest.newBuilder().setName(name).addAllVolumeIds(orEmpty(volumes))
                .putAllParameters(orEmpty(params)).putAllSecrets(secrets.secrets());
        try (var s = client.addons()) {
            client.output().show(s.volumeGroups().createVolumeGroup(req.build()));
        }
        return 0;
    }

    @Command(name = "modify", description = "ModifyVolumeGroupMembership VG_ID --volume-id ID... (the complete new member list).")
    int modify(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
               @Parameters(paramLabel = "VG_ID") String groupId,
               @Option(names = "--volume-id", paramLabel = "ID", description = "A member volume (repeatable): the full list, not a delta") List<String> volumes,
               @Option(names = "--empty", description = "Remove every member (instead of --volume-id)") boolean empty,
               @Option(names = "--param", paramLabel = "KEY=VALUE", description = "A parameter (repeatable)") Map<String, String> params) {
        if (empty == (volumes != null && !volumes.isEmpty())) {
            throw new IllegalArgumentException("give the complete member list with --volume-id ID..., or --empty to remove every member");
        }
        var req = ModifyVolumeGroupMembershipRequest.newBuilder().setVolumeGroupId(groupId).addAllVolumeIds(orEmpty(volumes))
                .putAllParameters(orEmpty(params)).putAllSecrets(secrets.secrets());
        try (var s = client.addons()) {
            client.output().show(s.volumeGroups().modifyVolumeGroupMembership(req.build()));
        }
        return 0;
    }

    @Command(name = "get", description = "ControllerGetVolumeGroup VG_ID.")
    int get(@Mixin ClientOptions client, @Mixin SecretOptions secrets, @Parameters(paramLabel = "VG_ID") String groupId) {
        try (var s = client.addons()) {
            client.output().show(s.volumeGroups().controllerGetVolumeGroup(ControllerGetVolumeGroupRequest.newBuilder()
                    .setVolumeGroupId(groupId).putAllSecrets(secrets.secrets()).build()));
        }
        return 0;
    }

    @Command(name = "list", description = "ListVolumeGroups: one page, or every page with --paging.")
    int list(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
             @Option(names = "--max-entries", paramLabel = "N", defaultValue = "0", description = "Page size; 0 lets the plugin choose") int maxEntries,
             @Option(names = "--starting-token", paramLabel = "TOKEN", description = "Continue from this next_token") String token,
             @Option(names = "--paging", description = "Follow next_token to the last page") boolean paging) {
        try (var s = client.addons()) {
            var pages = Paging.pages(token, paging, t -> s.volumeGroups().listVolumeGroups(ListVolumeGroupsRequest.newBuilder()
                    .setMaxEntries(maxEntries).setStartingToken(t).putAllSecrets(secrets.secrets()).build()),
                    ListVolumeGroupsResponse::getNextToken);
            var all = ListVolumeGroupsResponse.newBuilder();
            pages.forEach(p -> all.addAllEntries(p.getEntriesList()));
            client.output().show(all.setNextToken(pages.getLast().getNextToken()).build());
        }
        return 0;
    }

    @Command(name = "delete", description = "DeleteVolumeGroup VG_ID.")
    int delete(@Mixin ClientOptions client, @Mixin SecretOptions secrets, @Parameters(paramLabel = "VG_ID") String groupId) {
        try (var s = client.addons()) {
            var r = s.volumeGroups().deleteVolumeGroup(DeleteVolumeGroupRequest.newBuilder()
                    .setVolumeGroupId(groupId).putAllSecrets(secrets.secrets()).build());
            client.output().show(r, View.line("deleted volume group " + groupId));
        }
        return 0;
    }
}
