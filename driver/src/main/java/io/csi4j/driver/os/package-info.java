/**
 * The operating system beneath the storage engines: Linux syscalls through java.lang.foreign (no
 * JNA, no JNI), and the few external programs with no syscall equivalent (mkfs, online resize, blkid).
 *
 * <ul>
 *   <li>{@link io.csi4j.driver.os.Mounts} mounts; {@link io.csi4j.driver.os.MountTable} says what is
 *       mounted, read fresh from /proc/self/mountinfo every time.</li>
 *   <li>{@link io.csi4j.driver.os.LoopDevice} attaches image files; {@link io.csi4j.driver.os.BlockDevice}
 *       sizes and tunes block devices.</li>
 *   <li>{@link io.csi4j.driver.os.Reflink}, {@link io.csi4j.driver.os.SparseCopy},
 *       {@link io.csi4j.driver.os.Freeze} make snapshots; {@link io.csi4j.driver.os.WriteStop} makes a mounted
 *       filesystem read-only at once (or shuts it down) for a fenced replica, {@code LoopDevice.refuseWrites} a block
 *       volume's loop device (BLKROSET, cleared at every attach); {@link io.csi4j.driver.os.Fallocate} and
 *       {@link io.csi4j.driver.os.FileStat} manage sparse space, {@link io.csi4j.driver.os.ZeroFill} makes a
 *       file thick (no holes, unwritten or shared extents) and marks a fresh fill; {@link io.csi4j.driver.os.Durable}
 *       makes effects crash-safe.</li>
 *   <li>{@link io.csi4j.driver.os.ProjectQuota}: project ids on directories (FS_IOC_FSSETXATTR) and their
 *       limits and usage (quotactl_fd), for the dir engine's hard capacity.</li>
 *   <li>{@link io.csi4j.driver.os.FsStats} is statfs; {@link io.csi4j.driver.os.Tools} runs programs.</li>
 * </ul>
 *
 * Failing syscalls throw {@link io.csi4j.driver.os.OsException} (call, path, errno); failing programs
 * throw {@link io.csi4j.driver.os.ToolException}. Both are unchecked; the engine turns them into
 * {@link io.csi4j.driver.storage.StorageException}s with a reason (the CSI layer picks the code).
 */
package io.csi4j.driver.os;
