package io.csi4j.cli.call;

import com.google.protobuf.Message;
import io.csi4j.cli.ByteSize;
import io.csi4j.driver.json.Json;
import io.csi4j.cli.output.Output;
import io.csi4j.cli.output.Yaml;
import io.csi4j.proto.csi.BlockMetadata;
import io.csi4j.proto.csi.GetMetadataAllocatedRequest;
import io.csi4j.proto.csi.GetMetadataAllocatedResponse;
import io.csi4j.proto.csi.GetMetadataDeltaRequest;
import io.csi4j.proto.csi.GetMetadataDeltaResponse;
import java.io.PrintWriter;
import java.util.Iterator;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * {@code csi4j snapshot}: the CSI SnapshotMetadata service (changed block tracking). Ranges are printed as they
 * arrive, never collected: a map of a large volume does not have to fit in memory. Table output is one row a
 * range with a closing total; json prints each response message as a pretty document of its own; yaml one document each.
 */
@Command(name = "snapshot", description = "CSI SnapshotMetadata: the allocated ranges of a snapshot, the changed ranges between two.")
public final class SnapshotCommand {

    static final class Stream {
        @Option(names = "--starting-offset", paramLabel = "BYTES", defaultValue = "0",
                description = "Resume at this byte (after the last range already received). Default: ${DEFAULT-VALUE}")
        long startingOffset;

        @Option(names = "--max-results", paramLabel = "N", defaultValue = "0",
                description = "At most N ranges per response message; 0 lets the plugin choose. Default: ${DEFAULT-VALUE}")
        int maxResults;
    }

    @Command(name = "allocated", description = "GetMetadataAllocated SNAPSHOT_ID: the ranges that hold data.")
    int allocated(@Mixin ClientOptions client, @Mixin SecretOptions secrets, @Mixin Stream stream,
                  @Parameters(paramLabel = "SNAPSHOT_ID") String snapshotId) {
        var req = GetMetadataAllocatedRequest.newBuilder().setSnapshotId(snapshotId).setStartingOffset(stream.startingOffset)
                .setMaxResults(stream.maxResults).putAllSecrets(secrets.secrets()).build();
        try (var s = client.csi()) {
            Iterator<GetMetadataAllocatedResponse> it = s.snapshotMetadata().getMetadataAllocated(req);
            print(client, it, GetMetadataAllocatedResponse::getBlockMetadataList, GetMetadataAllocatedResponse::getVolumeCapacityBytes,
                    "allocated");
        }
        return 0;
    }

    @Command(name = "delta", description = "GetMetadataDelta BASE_SNAPSHOT_ID TARGET_SNAPSHOT_ID: the ranges that changed.")
    int delta(@Mixin ClientOptions client, @Mixin SecretOptions secrets, @Mixin Stream stream,
              @Parameters(index = "0", paramLabel = "BASE_SNAPSHOT_ID") String base,
              @Parameters(index = "1", paramLabel = "TARGET_SNAPSHOT_ID") String target) {
        var req = GetMetadataDeltaRequest.newBuilder().setBaseSnapshotId(base).setTargetSnapshotId(target)
                .setStartingOffset(stream.startingOffset).setMaxResults(stream.maxResults).putAllSecrets(secrets.secrets()).build();
        try (var s = client.csi()) {
            Iterator<GetMetadataDeltaResponse> it = s.snapshotMetadata().getMetadataDelta(req);
            print(client, it, GetMetadataDeltaResponse::getBlockMetadataList, GetMetadataDeltaResponse::getVolumeCapacityBytes,
                    "changed");
        }
        return 0;
    }

    private static <M extends Message> void print(ClientOptions client, Iterator<M> messages,
                                                  Function<M, List<BlockMetadata>> ranges,
                                                  ToLongFunction<M> capacity, String what) {
        PrintWriter out = client.out();
        switch (client.output().format()) {
            // pretty like every other command's: one JSON document per response message, one after the other
            // (as the stream arrives; jq and Gson's JsonStreamParser read such a sequence)
            case JSON -> messages.forEachRemaining(m -> out.println(Output.json(m)));
            case YAML -> messages.forEachRemaining(m -> out.print("---\n" + Yaml.write(Json.parse(Output.json(m)))));
            case TABLE -> {
                long count = 0;
                long bytes = 0;
                long volume = 0;
                out.println(String.format("%-16s %-16s %s", "OFFSET", "LENGTH", "END"));
                while (messages.hasNext()) {
                    M m = messages.next();
                    volume = capacity.applyAsLong(m);
                    for (BlockMetadata b : ranges.apply(m)) {
                        out.println(String.format("%-16d %-16d %d", b.getByteOffset(), b.getSizeBytes(), b.getByteOffset() + b.getSizeBytes()));
                        count++;
                        bytes += b.getSizeBytes();
                    }
                }
                out.println(count + " ranges, " + ByteSize.format(bytes) + " " + what + " of a " + ByteSize.format(volume) + " volume");
            }
        }
        out.flush();
    }
}
