package io.csi4j.cli.output;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.json.Json;
import io.csi4j.proto.csi.*;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OutputTest {

    @Test
    void yamlQuotesWhatCouldReadAsSomethingElse() {
        var tree = Json.parse("{\"name\": \"vol-1\", \"n\": 3, \"ok\": true, \"s\": \"true\", \"num\": \"10485760\", "
                + "\"colon\": \"a: b\", \"empty\": \"\", \"list\": [{\"x\": 1, \"y\": [\"p\"]}, \"z\"], \"none\": {}}");
        assertEquals("""
                name: vol-1
                "n": 3
                ok: true
                s: "true"
                num: "10485760"
                colon: "a: b"
                empty: ""
                list:
                  - x: 1
                    "y":
                      - p
                  - z
                none: {}
                """, Yaml.write(tree));
    }

    @Test
    void jsonAndYamlUseProtoFieldNames() {
        var r = CreateVolumeResponse.newBuilder().setVolume(Volume.newBuilder().setVolumeId("vol-1").setCapacityBytes(1L << 30)).build();
        var json = new StringWriter();
        new Output(OutputFormat.JSON, new PrintWriter(json)).show(r);
        var volume = (Map<?, ?>) ((Map<?, ?>) Json.parse(json.toString())).get("volume");
        assertEquals("vol-1", volume.get("volume_id"));
        assertEquals("1073741824", volume.get("capacity_bytes"));
        var yaml = new StringWriter();
        new Output(OutputFormat.YAML, new PrintWriter(yaml)).show(r);
        assertTrue(yaml.toString().startsWith("volume:\n  capacity_bytes: \"1073741824\"\n  volume_id: vol-1\n"), yaml.toString());
    }

    @Test
    void tablesLineUp() {
        var out = new StringWriter();
        var list = ListVolumesResponse.newBuilder()
                .addEntries(ListVolumesResponse.Entry.newBuilder().setVolume(Volume.newBuilder().setVolumeId("vol-a").setCapacityBytes(64L << 20)))
                .addEntries(ListVolumesResponse.Entry.newBuilder().setVolume(Volume.newBuilder().setVolumeId("vol-longer-id").setCapacityBytes(1000)
                        .setContentSource(VolumeContentSource.newBuilder().setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId("snap-1")))))
                .setNextToken("t1").build();
        new Output(OutputFormat.TABLE, new PrintWriter(out)).show(list);
        assertEquals("""
                VOLUME ID      CAPACITY  SOURCE           PUBLISHED ON  CONDITION
                vol-a          64Mi      -                -             -
                vol-longer-id  1000      snapshot snap-1  -             -

                next token: t1  (--starting-token, or --paging for all)
                """, out.toString());
        var empty = new StringWriter();
        new Output(OutputFormat.TABLE, new PrintWriter(empty)).show(ListSnapshotsResponse.getDefaultInstance());
        assertEquals("no snapshots\n", empty.toString());
    }

    @Test
    void bytesAreExactOrApproximate() {
        assertEquals("64Mi", Views.bytes(64L << 20));
        assertEquals("1000", Views.bytes(1000));
        assertEquals("0", Views.bytes(0));
        assertEquals("84307349504 (78.5Gi)", Views.bytes(84307349504L));
    }
}
