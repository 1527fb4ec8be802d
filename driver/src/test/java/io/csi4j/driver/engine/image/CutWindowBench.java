package io.csi4j.driver.engine.image;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.DataPath;
import io.csi4j.driver.engine.NodeStorage;
import io.csi4j.driver.engine.PointCutter;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.engine.StageOptions;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.driver.testing.ScratchFilesystem;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Not a test: the frozen window of a two-pass replication cut ({@link IncrementalCut}) on an image fragmented by
 * copy-on-write, the freeze's thread at normal priority ("before", as main) vs real-time ({@link
 * io.csi4j.driver.os.UrgentThread}), alternated cut by cut on the same image. Real XFS reflink pool, root and loop
 * devices needed. A staged 2 GiB ext4 volume holds a 1 GiB file; after a first point, FRAGMENT random 4 KiB writes
 * fragment the image and a base point is cut. Then a writer thread writes random 4 KiB blocks (O_DSYNC) all along, and
 * BUSY shell loops, each its own session (other tenants of the node: a nice value would not rank against them), keep the
 * CPUs busy; PAIRS pairs of cuts since the base follow, the pair's order alternating, each cut's point file dropped
 * after (the base stays). Prints each cut's line and the medians. Run by {@code scripts/bench-cut-window}.
 */
public final class CutWindowBench {
    private static final long MIB = 1 << 20;
    private static final Pattern LINE = Pattern.compile("writes held ([0-9.]+) ms \\(freeze and flush ([0-9.]+) ms, clone ([0-9.]+) ms, thaw ([0-9.]+) ms\\); "
            + "incremental since \\S+: \\d+ ranges, \\d+ bytes changed, \\d+ FICLONERANGE calls \\(extents compared in ([0-9.]+) ms");

    record Cut(boolean urgent, double held, double flush, double inside, double walk, int extents, String line) {}

    public static void main(String[] args) throws Exception {
        int fragment = args.length > 0 ? Integer.parseInt(args[0]) : 40000;
        int pairs = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        int busy = args.length > 2 ? Integer.parseInt(args[2]) : 4;
        List<String> lines = new ArrayList<>();
        Logger logger = Logger.getLogger(ImageFreezer.class.getName());
        logger.setUseParentHandlers(false);
        logger.addHandler(new Handler() {
            @Override public void publish(LogRecord r) { synchronized (lines) { lines.add(r.getMessage()); } }
            @Override public void flush() {}
            @Override public void close() {}
        });
        System.out.printf("CutWindowBench: %d random 4 KiB writes to fragment, %d pairs of cuts, %d busy loops, a writer thread, %d cores%n",
                fragment, pairs, busy, Runtime.getRuntime().availableProcessors());
        List<Cut> cuts = new ArrayList<>();
        try (ScratchFilesystem scratch = ScratchFilesystem.create("xfs", 8L << 30)) {
            Path node = Files.createTempDirectory("csi4j-cut-window-bench-");
            Pool pool = Pool.open(new DataDir(scratch.mountPoint().resolve("data")), OptionalLong.empty());
            try (ImageEngine engine = ImageEngine.open(pool, new ImageEngine.Options(1.0, DataPath.CONFIGURED.volumeDirectIo()))) {
                NodeStorage stage = engine.capability(NodeStorage.class).orElseThrow();
                PointCutter cutter = engine.capability(PointCutter.class).orElseThrow();
                String vol = ObjectId.generate(ObjectId.Kind.VOLUME, "node-1").toString();
                engine.createVolume(vol, 2048 * MIB, AccessType.mount("ext4"), Label.NONE);
                Path staging = node.resolve("staging");
                stage.stage(vol, staging, new StageOptions.Mount("ext4", List.of(), 0));
                Path image = engine.images().image(vol);
                List<String> snapshots = new ArrayList<>();
                List<Process> loops = new ArrayList<>();
                AtomicBoolean stop = new AtomicBoolean();
                AtomicLong written = new AtomicLong();
                Thread writer = null;
                try {
                    Path file = staging.resolve("data");
                    Random random = new Random(28);
                    byte[] chunk = new byte[(int) MIB];
                    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
                        for (int i = 0; i < 1024; i++) {
                            random.nextBytes(chunk);
                            f.write(chunk);
                        }
                        f.getFD().sync();
                    }
                    String first = IncrementalCutBench.snapshot();
                    cutter.cutPoint(first, vol, Label.NONE, "");
                    snapshots.add(first);
                    IncrementalCutBench.write(file, random, fragment);   // copy-on-write after the point: every block first written splits an extent
                    String base = IncrementalCutBench.snapshot();
                    cutter.cutPoint(base, vol, Label.NONE, first);
                    snapshots.add(base);
                    System.out.printf("base cut; image %d extents%n", IncrementalCutBench.extents(image));

                    for (int i = 0; i < busy; i++) {
                        loops.add(new ProcessBuilder("setsid", "sh", "-c", "while :; do :; done").redirectErrorStream(true).start());
                    }
                    writer = Thread.ofPlatform().name("cut-window-writer").start(() -> {
                        Random r = new Random(30);
                        byte[] block = new byte[4096];
                        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rwd")) {
                            while (!stop.get()) {
                                r.nextBytes(block);
                                f.seek((long) r.nextInt(1024 * 256) * 4096);
                                f.write(block);
                                written.incrementAndGet();
                            }
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    });
                    ImageFreezer before = new ImageFreezer(engine.images(), false);
                    ImageFreezer after = new ImageFreezer(engine.images(), true);
                    for (int pair = 1; pair <= pairs; pair++) {
                        for (boolean urgent : pair % 2 == 1 ? new boolean[] {false, true} : new boolean[] {true, false}) {
                            Thread.sleep(1000);   // the writer's changes since the last cut: the next pre-pass's and freeze's to clone
                            int extents = IncrementalCutBench.extents(image);
                            Path temp = engine.images().layout().temporary(IncrementalCutBench.snapshot(), ".img");
                            try {
                                IncrementalCut cut = IncrementalCut.prepare(engine.images(), vol, base, temp);
                                (urgent ? after : before).cut(List.of(vol), frozen ->
                                        cut.cut(frozen.contains(vol), () -> engine.images().cloneOrCopy(image, temp)));
                            } finally {
                                Files.deleteIfExists(temp);
                            }
                            String line;
                            synchronized (lines) { line = lines.getLast().replace(vol, "vol"); }
                            Matcher m = LINE.matcher(line);
                            if (!m.find()) throw new IllegalStateException("not an incremental two-pass cut: " + line);
                            Cut c = new Cut(urgent, d(m, 1), d(m, 2), d(m, 3), d(m, 5), extents, line);
                            cuts.add(c);
                            System.out.printf("pair %d %-6s image %d extents, %d blocks written so far: writes held %.1f ms (freeze and flush %.1f,"
                                    + " inside %.1f of which the walk %.1f)%n", pair, urgent ? "after" : "before", extents, written.get(),
                                    c.held, c.flush, c.inside, c.walk);
                            System.out.println("  " + line);
                        }
                    }
                } finally {
                    stop.set(true);
                    if (writer != null) writer.join();
                    for (Process p : loops) {
                        p.destroy();
                        p.waitFor();
                    }
                    stage.unstage(vol, staging);
                    for (String s : snapshots) engine.deleteSnapshot(s);
                    engine.deleteVolume(vol);
                    Files.deleteIfExists(staging);
                    Files.deleteIfExists(node);
                }
            }
        }
        summary(cuts);
    }

    private static void summary(List<Cut> cuts) {
        System.out.println();
        System.out.println("| cuts | writes held: median (min-max) ms | freeze and flush | inside the freeze | of it the walk of the image |");
        System.out.println("|---|---|---|---|---|");
        for (boolean urgent : new boolean[] {false, true}) {
            List<Cut> these = cuts.stream().filter(c -> c.urgent == urgent).toList();
            System.out.printf("| %s (%d) | %s | %s | %s | %s |%n", urgent ? "after: real-time" : "before: normal priority", these.size(),
                    stat(these, Cut::held), stat(these, Cut::flush), stat(these, Cut::inside), stat(these, Cut::walk));
        }
        List<String> ratios = new ArrayList<>();
        for (int i = 0; i + 1 < cuts.size(); i += 2) {
            Cut a = cuts.get(i).urgent ? cuts.get(i) : cuts.get(i + 1);
            Cut b = cuts.get(i).urgent ? cuts.get(i + 1) : cuts.get(i);
            ratios.add(String.format("%.2f", a.held / b.held));
        }
        System.out.println();
        System.out.println("writes held after/before, pair by pair: " + String.join(", ", ratios));
    }

    private static String stat(List<Cut> cuts, java.util.function.ToDoubleFunction<Cut> f) {
        double[] v = cuts.stream().mapToDouble(f).sorted().toArray();
        if (v.length == 0) return "-";
        double median = v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
        return String.format("%.1f (%.1f-%.1f)", median, v[0], v[v.length - 1]);
    }

    private static double d(Matcher m, int group) {
        return Double.parseDouble(m.group(group));
    }
}
