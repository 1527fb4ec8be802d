# Sourced by ./csi4j, ./test and .ci/run: finds JDK 25 and installs the Debian packages csi4j needs.

csi4j_find_java() {
  local candidate
  if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
    local major
    # the JDK's release file says its version without starting a JVM (~50 ms the launcher would pay each start),
    # read by the shell itself (no sed: a fork per call of the launcher)
    local line
    major=""
    if [[ -r "$JAVA_HOME/release" ]]; then
      while IFS= read -r line; do
        if [[ "$line" =~ ^JAVA_VERSION=\"([0-9]+) ]]; then major="${BASH_REMATCH[1]}"; break; fi
      done <"$JAVA_HOME/release"
    fi
    [[ -n "$major" ]] || major=$("$JAVA_HOME/bin/java" -XshowSettings:properties -version 2>&1 \
      | sed -n 's/^ *java.specification.version = //p')
    if [[ "${major%%.*}" -ge 25 ]]; then echo "$JAVA_HOME"; return 0; fi
  fi
  for candidate in /usr/lib/jvm/*25* /usr/lib/jvm/*-2[5-9]* /usr/lib/jvm/*-3[0-9]*; do
    if [[ -x "$candidate/bin/java" ]]; then echo "$candidate"; return 0; fi
  done
  echo "csi4j: no JDK 25 found (set JAVA_HOME or install one under /usr/lib/jvm)" >&2
  return 1
}

# Tools the driver runs (mkfs, resize, blkid, losetup for diagnostics) and the filesystems tests use.
CSI4J_DEBIAN_PACKAGES=(e2fsprogs xfsprogs btrfs-progs util-linux mount)
CSI4J_TOOL_CHECK=(mkfs.ext4 mkfs.xfs mkfs.btrfs xfs_growfs resize2fs blkid losetup)
# What scripts/image and the image test need: a Debian root filesystem from packages, and a container runtime
# (podman with runc: crun cannot run on this machine kind's hybrid cgroups, see deploy/podman/containers.conf).
CSI4J_IMAGE_PACKAGES=(mmdebstrap podman runc)
CSI4J_IMAGE_TOOL_CHECK=(mmdebstrap podman runc unshare)

# One code path for ./test, .ci/run and the launcher's serve and demo: every tool present, or the packages that
# hold them installed (root), or one line saying the exact command (not root: returns 1). Arguments: the names of
# a package list and its tool list (default CSI4J_DEBIAN_PACKAGES CSI4J_TOOL_CHECK).
csi4j_ensure_packages() {
  local -n packages_ref="${1:-CSI4J_DEBIAN_PACKAGES}"
  local -n tools_ref="${2:-CSI4J_TOOL_CHECK}"
  local CSI4J_DEBIAN_PACKAGES_=("${packages_ref[@]}")
  local missing=() tool
  for tool in "${tools_ref[@]}"; do
    command -v "$tool" >/dev/null 2>&1 || PATH="$PATH:/sbin:/usr/sbin" command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  if [[ $(id -u) -ne 0 ]]; then
    echo "csi4j: ${missing[*]} not found; as root run: apt-get install -y ${CSI4J_DEBIAN_PACKAGES_[*]}" >&2
    return 1
  fi
  echo "csi4j: ${missing[*]} not found; installing the Debian packages ${CSI4J_DEBIAN_PACKAGES_[*]} (apt-get)..." >&2
  local log rc=0
  log=$(mktemp)
  { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${CSI4J_DEBIAN_PACKAGES_[@]}"; } >"$log" 2>&1 || rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "csi4j: apt-get install ${CSI4J_DEBIAN_PACKAGES_[*]} failed (exit $rc):" >&2
    tail -n 5 "$log" >&2
  fi
  rm -f "$log"
  return $rc
}
