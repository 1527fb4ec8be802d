import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Build step (driver/pom.xml, generate-resources): writes the version and the commit the classes are built from
 * into {@code build.properties}, which {@code Version.current()} and {@code csi4j --version} read.
 * {@code BuildInfo OUT_FILE VERSION REPO_DIR}. The commit comes from git (12 hex digits, "-dirty" when tracked files
 * differ from it); without git or outside a clone (a source tarball) it is "unknown". Nothing time-dependent: the
 * same commit gives the same file, so images stay reproducible.
 */
public final class BuildInfo {
    public static void main(String[] args) throws IOException, InterruptedException {
        Path out = Path.of(args[0]);
        String version = args[1];
        Path repo = Path.of(args[2]);
        String commit = git(repo, "rev-parse", "--short=12", "HEAD");
        if (commit == null || commit.isEmpty()) {
            commit = "unknown";
        } else {
            String changes = git(repo, "status", "--porcelain", "--untracked-files=no");
            if (changes == null || !changes.isEmpty()) commit += "-dirty";
        }
        Files.createDirectories(out.getParent());
        Files.writeString(out, "version=" + version + "\ncommit=" + commit + "\n", StandardCharsets.UTF_8);
    }

    /** The command's output, trimmed; null when git is missing, fails or hangs. */
    private static String git(Path repo, String... args) throws InterruptedException {
        var command = new java.util.ArrayList<String>();
        command.add("git");
        command.add("-C");
        command.add(repo.toString());
        command.addAll(java.util.List.of(args));
        try {
            Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            byte[] output = p.getInputStream().readAllBytes();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return null;
            }
            return p.exitValue() == 0 ? new String(output, StandardCharsets.UTF_8).strip() : null;
        } catch (IOException noGit) {
            return null;
        }
    }
}
