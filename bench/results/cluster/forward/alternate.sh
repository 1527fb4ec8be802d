#!/usr/bin/env bash
# How the files here were made: the routing overhead phase of scripts/bench-cluster, alternating between this
# branch ("after") and commit f3d1f9c ("before": blocking stubs on virtual threads), so both see the machine's load
# alike; each run is itself interleaved call by call (controller vs straight to the agent).
#   bench/results/cluster/forward/alternate.sh TAG RUNS [PAIRS=600]   (CONTROLLER_JAVA_OPTS passes through: the c2 runs)
# "before" is a plain copy of f3d1f9c (git archive) built with ./mvnw -o -DskipTests package, with this branch's
# bench-cluster and ClusterBench.java copied in (they add PHASES and the CPU line; the measured calls are the same).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." && pwd)"
TAG="$1" RUNS="$2" PAIRS="${3:-600}" BASE="${BASE:-/tmp/csi4j-base-f3d1f9c}"
if [[ ! -f "$BASE/cli/target/csi4j.jar" ]]; then
  mkdir -p "$BASE" && git -C "$ROOT" archive f3d1f9c | tar -x -C "$BASE"
  (cd "$BASE" && ./mvnw -q -B -o -DskipTests package)
fi
cp "$ROOT/scripts/bench-cluster" "$ROOT/scripts/ClusterBench.java" "$BASE/scripts/"
OUT="$ROOT/bench/results/cluster/forward"
for i in $(seq 1 "$RUNS"); do
  (cd "$ROOT" && PHASES=overhead scripts/bench-cluster "/tmp/$TAG-after-$i" "$PAIRS")
  { echo "# after: this branch (pass-through calls forwarded asynchronously on the event loop)"; cat "/tmp/$TAG-after-$i/overhead.txt"; } > "$OUT/$TAG-after-$i.txt"
  (cd "$BASE" && PHASES=overhead scripts/bench-cluster "/tmp/$TAG-before-$i" "$PAIRS")
  { echo "# before: commit f3d1f9c (blocking stubs on virtual threads), built from a copy (see alternate.sh)"; cat "/tmp/$TAG-before-$i/overhead.txt"; } > "$OUT/$TAG-before-$i.txt"
done
