import io.csi4j.proto.csi.*;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Not a test: how the cost of CreateVolume+DeleteVolume and of ListVolumes grows with the number of volumes
 * that exist. Grows the plugin's volume count in steps (created 16 at a time, not measured), and at each step
 * measures create+delete with 1 and with 16 clients, ListVolumes of everything in one page (up to 10,000),
 * in pages of 500, and one page of 500. Deletes everything it created at the end. Writes scale.csv, a
 * markdown table (scale.md) and a plot (scale.png) into OUT.
 * Usage (scripts/bench-all): {@code java -cp <cli jars> scripts/ScaleSweep.java ENDPOINT OUT 0,1000,10000,100000 [iterations]}
 */
public final class ScaleSweep {
    record Step(long volumes, double createDelete1, double createMs1, double deleteMs1, double createDelete16,
                double onePageMs, long onePageEntries, double pagedTotalMs, long pages, double pageOf500Ms) {}

    static final VolumeCapability MOUNT = VolumeCapability.newBuilder()
            .setMount(VolumeCapability.MountVolume.newBuilder().setFsType("ext4"))
            .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER))
            .build();

    static ControllerGrpc.ControllerBlockingStub controller;
    static final String RUN = "sweep-" + Long.toString(System.nanoTime() & 0xffffff, 36);
    static final AtomicLong names = new AtomicLong();

    public static void main(String[] args) throws Exception {
        Endpoint endpoint = Endpoint.parse(args[0]);
        Path out = Path.of(args[1]);
        long[] steps = Arrays.stream(args[2].split(",")).mapToLong(Long::parseLong).toArray();
        int iterations = args.length > 3 ? Integer.parseInt(args[3]) : 500;
        Files.createDirectories(out);
        ManagedChannel channel = Channels.builder(endpoint).maxInboundMessageSize(64 << 20).build();
        controller = ControllerGrpc.newBlockingStub(channel);
        Queue<String> prefilled = new ConcurrentLinkedQueue<>();
        List<Step> results = new ArrayList<>();
        try {
            createDelete(1, 200);  // warm-up, not recorded
            for (long target : steps) {
                long before = prefilled.size();
                long start = System.nanoTime();
                parallel(16, target - before, () -> prefilled.add(create(RUN + "-fill-" + names.incrementAndGet())));
                if (target > before) {
                    System.err.printf(Locale.ROOT, "created %d volumes in %.1f s%n", target - before, (System.nanoTime() - start) / 1e9);
                }
                double[] one = createDelete(1, iterations);
                double[] sixteen = createDelete(16, iterations * 4);
                double[] onePage = list(Math.min(10_000, (int) Math.max(target, 1)), false, 5);
                double[] paged = list(500, true, 3);
                double[] page500 = list(500, false, 20);
                Step s = new Step(target, one[0], one[1], one[2], sixteen[0], onePage[0], (long) onePage[1], paged[0],
                        (long) paged[2], page500[0]);
                results.add(s);
                System.err.println(s);
            }
        } finally {
            long start = System.nanoTime();
            int n = prefilled.size();
            parallel(16, n, () -> {
                String id = prefilled.poll();
                if (id != null) controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
            });
            System.err.printf(Locale.ROOT, "deleted %d volumes in %.1f s%n", n, (System.nanoTime() - start) / 1e9);
            channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
        write(out, results);
    }

    static String create(String name) {
        return controller.createVolume(CreateVolumeRequest.newBuilder().setName(name).addVolumeCapabilities(MOUNT)
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(1 << 20)).build()).getVolume().getVolumeId();
    }

    /** {iterations per second, create p50 ms, delete p50 ms} of create+delete by {@code clients} at once. */
    static double[] createDelete(int clients, int iterations) throws Exception {
        long[] creates = new long[iterations];
        long[] deletes = new long[iterations];
        AtomicLong next = new AtomicLong();
        long start = System.nanoTime();
        parallel(clients, clients, () -> {
            for (long i; (i = next.getAndIncrement()) < iterations; ) {
                long t0 = System.nanoTime();
                String id = create(RUN + "-cd-" + names.incrementAndGet());
                long t1 = System.nanoTime();
                controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
                creates[(int) i] = t1 - t0;
                deletes[(int) i] = System.nanoTime() - t1;
            }
        });
        double seconds = (System.nanoTime() - start) / 1e9;
        return new double[] {iterations / seconds, median(creates) / 1e6, median(deletes) / 1e6};
    }

    /**
     * ListVolumes with max_entries {@code pageSize}: only the first page, or ({@code all}) following next_token to
     * the end. Median over {@code repeats} of {total ms, entries, pages}.
     */
    static double[] list(int pageSize, boolean all, int repeats) {
        long[] nanos = new long[repeats];
        long entries = 0;
        long pages = 0;
        for (int r = 0; r < repeats; r++) {
            entries = 0;
            pages = 0;
            String token = "";
            long start = System.nanoTime();
            do {
                var page = controller.listVolumes(ListVolumesRequest.newBuilder().setMaxEntries(pageSize).setStartingToken(token).build());
                entries += page.getEntriesCount();
                pages++;
                token = all ? page.getNextToken() : "";
            } while (!token.isEmpty());
            nanos[r] = System.nanoTime() - start;
        }
        return new double[] {median(nanos) / 1e6, entries, pages};
    }

    static void parallel(int threads, long tasks, Runnable task) throws Exception {
        if (tasks <= 0) return;
        AtomicLong left = new AtomicLong(tasks);
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                futures.add(pool.submit(() -> {
                    while (left.getAndDecrement() > 0) task.run();
                    return null;
                }));
            }
            for (Future<?> f : futures) f.get();
        }
    }

    static double median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    static void write(Path out, List<Step> steps) throws Exception {
        var csv = new StringBuilder("volumes,create_delete_per_s_1,create_p50_ms,delete_p50_ms,create_delete_per_s_16,"
                + "one_page_ms,one_page_entries,paged_500_total_ms,pages,page_of_500_ms\n");
        var md = new StringBuilder("| volumes existing | create+delete/s, 1 client | CreateVolume p50 | DeleteVolume p50 "
                + "| create+delete/s, 16 clients | ListVolumes, one page | ListVolumes, all in pages of 500 | one page of 500 |\n"
                + "|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Step s : steps) {
            csv.append(String.format(Locale.ROOT, "%d,%.1f,%.2f,%.2f,%.1f,%.1f,%d,%.1f,%d,%.2f%n", s.volumes(), s.createDelete1(),
                    s.createMs1(), s.deleteMs1(), s.createDelete16(), s.onePageMs(), s.onePageEntries(), s.pagedTotalMs(), s.pages(),
                    s.pageOf500Ms()));
            md.append(String.format(Locale.ROOT, "| %,d | %.0f | %.2f ms | %.2f ms | %.0f | %.1f ms (%,d entries) | %.1f ms (%d pages) | %.2f ms |%n",
                    s.volumes(), s.createDelete1(), s.createMs1(), s.deleteMs1(), s.createDelete16(), s.onePageMs(),
                    s.onePageEntries(), s.pagedTotalMs(), s.pages(), s.pageOf500Ms()));
        }
        Files.writeString(out.resolve("scale.csv"), csv);
        Files.writeString(out.resolve("scale.md"), md);
        plot(out.resolve("scale.png"), steps);
    }

    /** Two panels over the number of volumes (log scale): create+delete per second, and ListVolumes times. */
    static void plot(Path file, List<Step> steps) throws Exception {
        System.setProperty("java.awt.headless", "true");
        int w = 960, h = 400;
        var image = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, w, h);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        double[] x = steps.stream().mapToDouble(s -> Math.log10(Math.max(s.volumes(), 100))).toArray();
        panel(g, 10, "create+delete per second", x, steps,
                List.of(new Series("1 client", new Color(0x1f77b4), steps.stream().mapToDouble(Step::createDelete1).toArray()),
                        new Series("16 clients", new Color(0xff7f0e), steps.stream().mapToDouble(Step::createDelete16).toArray())));
        panel(g, w / 2 + 10, "ListVolumes (ms)", x, steps,
                List.of(new Series("all in pages of 500", new Color(0x2ca02c), steps.stream().mapToDouble(Step::pagedTotalMs).toArray()),
                        new Series("one page (<= 10,000)", new Color(0xd62728), steps.stream().mapToDouble(Step::onePageMs).toArray()),
                        new Series("one page of 500", new Color(0x9467bd), steps.stream().mapToDouble(Step::pageOf500Ms).toArray())));
        g.dispose();
        javax.imageio.ImageIO.write(image, "png", file.toFile());
    }

    record Series(String name, Color color, double[] y) {}

    static void panel(Graphics2D g, int left, String title, double[] x, List<Step> steps, List<Series> series) {
        int top = 30, width = 440, height = 300;
        double maxY = series.stream().flatMapToDouble(s -> Arrays.stream(s.y())).max().orElse(1) * 1.1;
        double minX = Arrays.stream(x).min().orElse(0), maxX = Math.max(Arrays.stream(x).max().orElse(1), minX + 1);
        g.setColor(Color.BLACK);
        g.drawString(title, left + 40, 20);
        g.drawRect(left + 40, top, width - 50, height);
        for (int i = 0; i <= 4; i++) {
            int yy = top + height - i * height / 4;
            g.drawString(String.format(Locale.ROOT, "%.0f", maxY * i / 4), left, yy + 4);
        }
        for (int i = 0; i < x.length; i++) {
            int xx = left + 40 + (int) ((x[i] - minX) / (maxX - minX) * (width - 70)) + 10;
            g.drawString(String.format(Locale.ROOT, "%,d", steps.get(i).volumes()), xx - 15, top + height + 15);
        }
        g.drawString("volumes existing (log scale)", left + 160, top + height + 32);
        int legend = 0;
        for (Series s : series) {
            g.setColor(s.color());
            g.setStroke(new BasicStroke(2));
            int px = -1, py = -1;
            for (int i = 0; i < x.length; i++) {
                int xx = left + 40 + (int) ((x[i] - minX) / (maxX - minX) * (width - 70)) + 10;
                int yy = top + height - (int) (s.y()[i] / maxY * height);
                g.fillOval(xx - 3, yy - 3, 6, 6);
                if (px >= 0) g.drawLine(px, py, xx, yy);
                px = xx;
                py = yy;
            }
            g.drawString(s.name(), left + 50, top + 15 + 15 * legend++);
        }
    }
}
