package io.csi4j.driver.engine.image;

import static io.csi4j.driver.engine.EngineErrors.translate;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.EngineErrors;
import io.csi4j.driver.engine.ImageImport;
import io.csi4j.driver.engine.InPlaceApply;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.os.Durable;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.ZeroFill;
import io.csi4j.driver.storage.StorageException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.logging.Logger;

/**
 * {@link InPlaceApply} on a reflink pool (docs/inplace-rounds.md, section 1): the journal is written in {@code .tmp}
 * while the ranges arrive (J1), synced and renamed into {@code journals/} at commit (J2: complete), then, under the
 * volume's lock, which a stage takes while it attaches: the look again (A1), the records written into the image and the
 * image synced (A2), the replica renamed from the base point to the new one (A3, the same inode), the journal dropped
 * (A5). The state is recorded by the caller after the commit (A4): a crash between A5 and A4 leaves the one replica
 * naming another point than the state, which {@code Rounds.finishCutShort} rolls forward as it does for a round built
 * beside. No secondary's image is ever half-applied outside the lock or after start-up: {@link #replay}.
 */
final class InPlaceRounds implements InPlaceApply {
    private static final Logger LOG = Logger.getLogger(InPlaceRounds.class.getName());

    /** The steps of a commit, for the tests that stop it at each (the engine stopped there, as a crash would). */
    enum Step { JOURNAL_WRITTEN, JOURNAL_COMPLETE, APPLYING, APPLIED, RENAMED }

    /** Told each step as it is reached ({@code record}: the records applied so far, while APPLYING). */
    interface Steps {
        Steps NONE = (step, record) -> { };

        void reached(Step step, int record);
    }

    private final ImagePool images;
    private final ImageCapacity capacity;
    private final ImageMover mover;
    private final Steps steps;

    InPlaceRounds(ImagePool images, ImageCapacity capacity, ImageMover mover, Steps steps) {
        this.images = images;
        this.capacity = capacity;
        this.mover = mover;
        this.steps = steps;
    }

    @Override
    public Optional<ImageImport> beginInPlace(String volumeId, long sourceBytes, long capacityBytes, AccessType access, String sourceRef,
                                              Artifact.Label label, Replica base, Replica keepAs, long bytesToSend) {
        PoolLayout.checkId("volume", volumeId);
        if (!images.pool().reflink() || base == null || keepAs == null || !base.sourceVolumeId().equals(volumeId)
                || !keepAs.sourceVolumeId().equals(volumeId) || base.snapshotId().equals(keepAs.snapshotId())) return Optional.empty();
        if (bytesToSend < 0 || bytesToSend > InPlaceApply.journalLimit(capacityBytes)) return Optional.empty();
        boolean eligible = translate("looking at volume " + volumeId + "'s image", () -> images.locks().locked(volumeId,
                () -> LoopDevice.findUsingCanonicalPath(images.image(volumeId)).isEmpty()
                        && whyNot(volumeId, base, sourceBytes, capacityBytes) == null && !images.layout().hasJournal(volumeId)));
        if (!eligible) return Optional.empty();
        // ranges of 64 KiB at least, but for zero ranges: their count is bounded by the bytes they cover
        long reserve = bytesToSend + RoundJournal.overhead(bytesToSend / 4096 + 16);
        try {
            capacity.reserve(reserve, "the journal of volume " + volumeId);
        } catch (StorageException e) {
            if (e.reason() != StorageException.Reason.NO_SPACE) throw e;
            LOG.info(() -> "volume " + volumeId + ": no room for a round's journal (" + e.getMessage() + "): built beside");
            return Optional.empty();
        }
        Path temp = images.layout().temporary(volumeId, PoolLayout.JOURNAL);
        try {
            var writer = new RoundJournal.Writer(temp, new RoundJournal.Header(volumeId, base.snapshotId(), keepAs.snapshotId(), sourceBytes));
            return Optional.of(new Journaled(volumeId, temp, writer, reserve,
                    new Fallback(sourceBytes, capacityBytes, access, sourceRef, label, base, keepAs)));
        } catch (IOException | RuntimeException e) {
            capacity.settle(reserve, 0);
            PoolLayout.deleteQuietly(temp);
            throw e instanceof IOException io ? EngineErrors.of("starting the journal of volume " + volumeId, io) : (RuntimeException) e;
        }
    }

    /**
     * Why the round cannot go into the image in place (null: it can), but for a loop device on it, which the caller
     * looks for (at commit it refuses the round): checked before anything is written and again under the lock at
     * commit. The caller holds the volume's lock.
     */
    private String whyNot(String volumeId, Replica base, long sourceBytes, long capacityBytes) {
        Path image = images.image(volumeId);
        Path replica = images.layout().replica(volumeId, base.snapshotId());
        try {
            if (!Files.exists(image, LinkOption.NOFOLLOW_LINKS) || !Files.exists(replica, LinkOption.NOFOLLOW_LINKS)) return "no image or replica";
            if (ImagePool.links(image) != 2 || !Files.isSameFile(image, replica)) return "the image is not its replica's inode";
            long size = Files.size(image);
            long grown = capacityBytes == 0 ? sourceBytes : Math.max(Math.ceilDiv(capacityBytes, ImageFormat.MIB) * ImageFormat.MIB, sourceBytes);
            if (size != sourceBytes || grown != sourceBytes) return "its size changes (" + size + " -> " + grown + ")";
        } catch (IOException e) {
            throw new UncheckedIOException("looking at " + image, e);
        }
        if (ZeroFill.fresh(image)) return "it carries a fresh fill's mark";
        return null;
    }

    /** What a round built beside needs, when the look at commit finds the image split or resized. */
    private record Fallback(long sourceBytes, long capacityBytes, AccessType access, String sourceRef, Artifact.Label label,
                            Replica base, Replica keepAs) {}

    /** The round's import: ranges into the journal until commit. */
    private final class Journaled implements ImageImport {
        private final String volumeId;
        private final Path temp;
        private final RoundJournal.Writer writer;
        /** The journal's space promised to the pool; grows when its records take more than the count allowed for. */
        private long reserved;
        private final Fallback fallback;
        private boolean done;

        Journaled(String volumeId, Path temp, RoundJournal.Writer writer, long reserve, Fallback fallback) {
            this.volumeId = volumeId;
            this.temp = temp;
            this.writer = writer;
            this.reserved = reserve;
            this.fallback = fallback;
        }

        @Override
        public void write(ByteBuffer data, long offset) {
            fits(data.remaining());
            try {
                writer.data(data, offset);
            } catch (IOException e) {
                throw EngineErrors.of("journaling volume " + volumeId + " at " + offset, e);
            }
        }

        @Override
        public void zero(long offset, long length) {
            fits(0);
            try {
                writer.zero(offset, length);
            } catch (IOException e) {
                throw EngineErrors.of("journaling a zero range of volume " + volumeId + " at " + offset, e);
            }
        }

        /**
         * Promises more space before a record would take the journal past what is promised: the reservation counts on
         * ranges of 4 KiB or more (what extents are), the caller bounds the bytes to the header's count, and a peer
         * sending smaller ranges must still never write a journal the pool did not promise (NO_SPACE fails the round,
         * closed uncommitted).
         */
        private void fits(long dataBytes) {
            long missing = writer.sizeWith(dataBytes) - reserved;
            if (missing <= 0) return;
            long more = Math.max(missing, 1 << 20);
            capacity.reserve(more, "the journal of volume " + volumeId + " (" + writer.records() + " records, smaller on average"
                    + " than the 4 KiB its first promise of " + reserved + " bytes counted on)");
            reserved += more;
        }

        @Override
        public long commit() {
            if (done) throw new IllegalStateException("the round of volume " + volumeId + " is committed or closed");
            done = true;
            try {
                RoundJournal.Contents contents;
                try {
                    contents = writer.finish();
                    writer.close();
                } catch (IOException e) {
                    closeQuietly();
                    PoolLayout.deleteQuietly(temp);
                    throw EngineErrors.of("syncing the journal of volume " + volumeId, e);
                }
                steps.reached(Step.JOURNAL_WRITTEN, 0);
                translate("completing the journal of volume " + volumeId, () -> {
                    images.layout().commitJournal(temp, volumeId);                  // J2: from here replay finishes it
                    return null;
                });
                steps.reached(Step.JOURNAL_COMPLETE, 0);
                return translate("applying the round of volume " + volumeId + " in place",
                        () -> images.locks().locked(volumeId, () -> {
                            return apply(contents);
                        }));
            } finally {
                capacity.settle(reserved, 0);
            }
        }

        /** A1 to A5 under the volume's lock. */
        private long apply(RoundJournal.Contents contents) {
            Path image = images.image(volumeId);
            List<LoopDevice> attached = LoopDevice.findUsingCanonicalPath(image);
            if (!attached.isEmpty()) {
                images.layout().dropJournal(volumeId);                               // nothing written: the point is kept
                throw StorageException.inUse("volume " + volumeId + " is attached on this node as "
                        + attached.stream().map(d -> d.node().toString()).toList() + " (staged or published); its image is not replaced");
            }
            String why = whyNot(volumeId, fallback.base(), fallback.sourceBytes(), fallback.capacityBytes());
            if (why != null) return buildBeside(contents, why);
            Path journal = images.layout().journal(volumeId);
            try {
                // the replica's mtime is when its data was last written by a round (DataMover.keptAt): this one
                Files.setLastModifiedTime(image, FileTime.from(Instant.now()));
                RoundJournal.apply(journal, contents, image, record -> steps.reached(Step.APPLYING, record));   // A2
            } catch (IOException e) {
                throw new UncheckedIOException("applying " + journal + " to " + image, e);
            }
            steps.reached(Step.APPLIED, contents.entries().size());
            renameReplica(fallback.base(), fallback.keepAs());                       // A3
            steps.reached(Step.RENAMED, contents.entries().size());
            images.layout().dropJournal(volumeId);                                   // A5; the caller records the point (A4)
            return fallback.sourceBytes();
        }

        /** The image was split from its replica or resized while the ranges arrived: today's build, from the journal. */
        private long buildBeside(RoundJournal.Contents contents, String why) {
            LOG.info(() -> "volume " + volumeId + ": the round is built beside its image, not applied in place (" + why + ")");
            Path journal = images.layout().journal(volumeId);
            Fallback f = fallback;
            try (ImageImport build = mover.beginImport(volumeId, f.sourceBytes(), f.capacityBytes(), f.access(), f.sourceRef(), f.label(),
                    f.base(), f.keepAs());
                 FileChannel from = FileChannel.open(journal, StandardOpenOption.READ)) {
                for (RoundJournal.Entry e : contents.entries()) {
                    if (e.zero()) {
                        build.zero(e.offset(), e.length());
                        continue;
                    }
                    ByteBuffer data = ByteBuffer.allocate((int) e.length());
                    while (data.hasRemaining()) {
                        if (from.read(data, e.at() + data.position()) < 0) throw new IOException(journal + " ends inside a record");
                    }
                    build.write(data.flip(), e.offset());
                }
                return build.commit();
            } catch (IOException e) {
                throw new UncheckedIOException("building volume " + volumeId + " from " + journal, e);
            } finally {
                images.layout().dropJournal(volumeId);       // the image was never written: the journal means nothing
            }
        }

        @Override
        public void close() {
            if (done) return;
            done = true;
            closeQuietly();
            PoolLayout.deleteQuietly(temp);
            capacity.settle(reserved, 0);
        }

        private void closeQuietly() {
            try {
                writer.close();
            } catch (IOException ignored) {
                // the file is removed or complete either way
            }
        }
    }

    /** The base point's replica (the image's inode) under the new point's name, durably; nothing when it has it already. */
    private void renameReplica(Replica base, Replica keepAs) {
        PoolLayout layout = images.layout();
        Path from = layout.replica(base.sourceVolumeId(), base.snapshotId());
        Path to = layout.replica(keepAs.sourceVolumeId(), keepAs.snapshotId());
        if (!Files.exists(from, LinkOption.NOFOLLOW_LINKS) && Files.exists(to, LinkOption.NOFOLLOW_LINKS)) return;
        Durable.rename(from, to);
        Durable.fsyncDirectory(to.getParent());
    }

    @Override
    public List<String> journals() {
        return translate("listing the round journals", images.layout()::journals);
    }

    @Override
    public void dropJournal(String volumeId) {
        translate("dropping the journal of volume " + volumeId, () -> {
            images.layout().dropJournal(volumeId);
            return null;
        });
    }

    @Override
    public Replay replay(String volumeId, String heldPoint) {
        PoolLayout layout = images.layout();
        if (!layout.hasJournal(volumeId)) return new Replay.None();
        Path journal = layout.journal(volumeId);
        RoundJournal.Contents contents;
        try {
            contents = RoundJournal.read(journal);
        } catch (RoundJournal.Corrupt e) {
            return new Replay.Torn(e.getMessage());
        } catch (IOException e) {
            return new Replay.Torn("reading " + journal + ": " + e);
        }
        RoundJournal.Header h = contents.header();
        if (!h.volumeId().equals(volumeId)) return new Replay.Torn(journal + " is of volume " + h.volumeId());
        if (heldPoint.equals(h.targetPoint())) {
            layout.dropJournal(volumeId);
            return new Replay.Discarded("the state names its point " + h.targetPoint() + " already");
        }
        if (!heldPoint.equals(h.basePoint())) {
            return new Replay.Torn("the journal goes from point " + h.basePoint() + " to " + h.targetPoint()
                    + ", the state names '" + heldPoint + "'");
        }
        return images.locks().locked(volumeId, () -> {
            Path image = images.image(volumeId);
            if (!LoopDevice.findUsingCanonicalPath(image).isEmpty()) {
                // a stage came after J2 and before A1, which refused: A2 never ran
                layout.dropJournal(volumeId);
                return new Replay.Discarded("a loop device backs the image: the round was refused before it wrote");
            }
            Path base = layout.replica(volumeId, h.basePoint());
            Path target = layout.replica(volumeId, h.targetPoint());
            Path replica = Files.exists(target, LinkOption.NOFOLLOW_LINKS) ? target : base;
            try {
                if (!Files.exists(image, LinkOption.NOFOLLOW_LINKS) || !Files.exists(replica, LinkOption.NOFOLLOW_LINKS)
                        || !Files.isSameFile(image, replica) || Files.size(image) != h.sizeBytes()) {
                    // split or resized before A1 could see it: A1 refuses to write such an image, so it is still the point
                    layout.dropJournal(volumeId);
                    return new Replay.Discarded("the image is not its replica's inode or not the point's size: it was never written");
                }
                RoundJournal.apply(journal, contents, image, record -> { });
                if (replica.equals(base)) renameReplica(new Replica(volumeId, h.basePoint()), new Replica(volumeId, h.targetPoint()));
                layout.dropJournal(volumeId);
                return new Replay.Applied(h.targetPoint());
            } catch (IOException | RuntimeException e) {
                return new Replay.Torn("applying " + journal + ": " + e);
            }
        });
    }
}
