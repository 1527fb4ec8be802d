package io.csi4j.driver.os;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * Project quotas (XFS {@code prjquota}; ext4 with the {@code project} feature mounted {@code prjquota}): a directory
 * tagged with a project id and {@code FS_XFLAG_PROJINHERIT} passes the id to everything made in it, and the
 * filesystem refuses a write past the project's hard block limit (XFS with ENOSPC, as a full filesystem; ext4 with
 * EDQUOT). All through system calls: the id and flag by FS_IOC_FSGETXATTR / FS_IOC_FSSETXATTR on the directory,
 * limits and usage by quotactl_fd(2) with the XFS quota commands (Q_XGETQSTAT, Q_XSETQLIM, Q_XGETQUOTA), which the
 * kernel also maps onto ext4's quota. quotactl_fd takes any open file of the filesystem, so no block device has to
 * be found (Linux 5.14+). Layouts and numbers checked against linux/fs.h, linux/dqblk_xfs.h and linux/quota.h.
 */
public final class ProjectQuota {
    private ProjectQuota() {}

    private static final long FS_IOC_FSGETXATTR = 0x801C581FL; // _IOR('X', 31, struct fsxattr)
    private static final long FS_IOC_FSSETXATTR = 0x401C5820L; // _IOW('X', 32, struct fsxattr)
    private static final int FS_XFLAG_PROJINHERIT = 0x200;
    // struct fsxattr { u32 xflags; u32 extsize; u32 nextents; u32 projid; u32 cowextsize; u8 pad[8]; }
    private static final int FSX_SIZE = 28, FSX_XFLAGS = 0, FSX_PROJID = 12;

    private static final int PRJQUOTA = 2;
    private static final int Q_XGETQUOTA = 0x5803, Q_XSETQLIM = 0x5804, Q_XGETQSTAT = 0x5805; // XQM_CMD(n) = ('X' << 8) + n
    private static final int FS_QUOTA_PDQ_ACCT = 1 << 4, FS_QUOTA_PDQ_ENFD = 1 << 5;
    // struct fs_disk_quota (linux/dqblk_xfs.h), 112 bytes; block counts in 512-byte basic blocks
    private static final int DQ_SIZE = 112, D_VERSION = 0, D_FLAGS = 1, D_FIELDMASK = 2, D_ID = 4, D_BLK_HARD = 8,
            D_BLK_SOFT = 16, D_INO_HARD = 24, D_BCOUNT = 40, D_ICOUNT = 48;
    private static final byte FS_DQUOT_VERSION = 1, FS_PROJ_QUOTA = 2;
    private static final short FS_DQ_BSOFT = 1 << 2, FS_DQ_BHARD = 1 << 3;
    private static final int BASIC_BLOCK = 512;

    private static int qcmd(int cmd) {
        return (cmd << 8) | PRJQUOTA;
    }

    /** A project's usage and hard limits; a limit of 0 means none. */
    public record Usage(long usedBytes, long limitBytes, long inodes, long inodeLimit) {}

    /**
     * Whether the filesystem holding {@code path} accounts and enforces project quotas. False, not an error, for a
     * filesystem without quotas (ENOSYS, ESRCH, EOPNOTSUPP, ENOTTY from quotactl) or a kernel without quotactl_fd.
     */
    public static boolean enforced(Path path) {
        try (Fd fd = Fd.open(path, Libc.O_RDONLY); Arena arena = Arena.ofConfined()) {
            MemorySegment stat = arena.allocate(128, 8); // struct fs_quota_stat: s8 version, u16 flags at 2, ...
            stat.set(JAVA_BYTE, 0, (byte) 1);
            try {
                Libc.quotactlFd(fd.fd(), qcmd(Q_XGETQSTAT), 0, stat, path);
            } catch (OsException e) {
                if (e.is(Errno.ENOSYS) || e.is(Errno.ESRCH) || e.is(Errno.EPERM) || e.is(Errno.EOPNOTSUPP) || e.is(Errno.ENOTTY)
                        || e.is(Errno.EINVAL)) return false;
                throw e;
            }
            int flags = Short.toUnsignedInt(stat.get(JAVA_SHORT.withByteAlignment(1), 2));
            return (flags & FS_QUOTA_PDQ_ACCT) != 0 && (flags & FS_QUOTA_PDQ_ENFD) != 0;
        }
    }

    /** The directory's project id, 0 when it has none. */
    public static int projectOf(Path dir) {
        try (Fd fd = Fd.open(dir, Libc.O_RDONLY); Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(FSX_SIZE, 4);
            fd.ioctl(FS_IOC_FSGETXATTR, attr, "ioctl(FS_IOC_FSGETXATTR)");
            return attr.get(JAVA_INT, FSX_PROJID);
        }
    }

    /** Tags {@code dir} with project {@code id} and PROJINHERIT, so that what is made in it gets the id too. */
    public static void assign(Path dir, int id) {
        try (Fd fd = Fd.open(dir, Libc.O_RDONLY); Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(FSX_SIZE, 4);
            fd.ioctl(FS_IOC_FSGETXATTR, attr, "ioctl(FS_IOC_FSGETXATTR)");
            attr.set(JAVA_INT, FSX_XFLAGS, attr.get(JAVA_INT, FSX_XFLAGS) | FS_XFLAG_PROJINHERIT);
            attr.set(JAVA_INT, FSX_PROJID, id);
            fd.ioctl(FS_IOC_FSSETXATTR, attr, "ioctl(FS_IOC_FSSETXATTR)");
        }
    }

    /**
     * Sets project {@code id}'s hard (and soft, the same) block limit on the filesystem holding {@code path}; 0
     * removes it. Rounded up to whole 512-byte basic blocks.
     */
    public static void limit(Path path, int id, long bytes) {
        if (bytes < 0) throw new IllegalArgumentException("negative limit " + bytes);
        long blocks = basicBlocks(bytes);
        try (Fd fd = Fd.open(path, Libc.O_RDONLY); Arena arena = Arena.ofConfined()) {
            MemorySegment dq = arena.allocate(DQ_SIZE, 8);
            dq.set(JAVA_BYTE, D_VERSION, FS_DQUOT_VERSION);
            dq.set(JAVA_BYTE, D_FLAGS, FS_PROJ_QUOTA);
            dq.set(JAVA_SHORT, D_FIELDMASK, (short) (FS_DQ_BSOFT | FS_DQ_BHARD));
            dq.set(JAVA_INT, D_ID, id);
            dq.set(JAVA_LONG, D_BLK_HARD, blocks);
            dq.set(JAVA_LONG, D_BLK_SOFT, blocks);
            Libc.quotactlFd(fd.fd(), qcmd(Q_XSETQLIM), id, dq, path);
        }
    }

    /** Project {@code id}'s usage and limits on the filesystem holding {@code path} (zeros for an id never used). */
    public static Usage usage(Path path, int id) {
        try (Fd fd = Fd.open(path, Libc.O_RDONLY); Arena arena = Arena.ofConfined()) {
            MemorySegment dq = arena.allocate(DQ_SIZE, 8);
            try {
                Libc.quotactlFd(fd.fd(), qcmd(Q_XGETQUOTA), id, dq, path);
            } catch (OsException e) {
                if (e.is(Errno.ENOENT)) return new Usage(0, 0, 0, 0); // XFS: no dquot for the id yet
                throw e;
            }
            return new Usage(dq.get(JAVA_LONG, D_BCOUNT) * BASIC_BLOCK, dq.get(JAVA_LONG, D_BLK_HARD) * BASIC_BLOCK,
                    dq.get(JAVA_LONG, D_ICOUNT), dq.get(JAVA_LONG, D_INO_HARD));
        }
    }

    /** Bytes as whole 512-byte basic blocks, rounded up (a limit never below what was asked). */
    public static long basicBlocks(long bytes) {
        return Math.ceilDiv(bytes, BASIC_BLOCK);
    }
}
