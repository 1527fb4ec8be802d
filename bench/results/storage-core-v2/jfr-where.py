# Sorts JFR CPU-time samples of `csi4j serve` (jfr print --json --events jdk.CPUTimeSample --stack-depth 96 FILE)
# into what a ListVolumes or a create+delete spends the server's CPU on. Each sample goes to the first rule (in
# this order) that matches a frame anywhere on its stack. Usage: python3 jfr-where.py FILE.json
import json, collections, sys

RULES = [
    ('catalog: WAL fdatasync (GroupCommit.sync)', lambda f: 'catalog/GroupCommit.sync' in f),
    ('loop-device scan (sysfs, /proc/partitions)', lambda f: 'os/LoopDevice.' in f),
    ('volume conditions (pool directory read / statx)', lambda f: 'ImageEngine.volumeConditions' in f),
    ('sdk MalformedRequests response round trip (fixed on another branch)', lambda f: 'MalformedRequests$1.parse' in f),
    ('protobuf size + serialization of the response', lambda f: ('writeTo' in f or 'getSerializedSize' in f) and 'proto/csi' in f),
    ('catalog: SQLite (statements, commits, column reads)', lambda f: f.startswith('org/sqlite') or 'driver/catalog/' in f),
    ('pool files (sidecar, image, unlink, statx, statfs)', lambda f: 'driver/engine/' in f or 'driver/os/' in f),
    ('gRPC, Netty, sdk interceptors (sending the response)', lambda f: 'csi/ControllerService.reply' in f),
    ('wire mapping, domain rules (csi4j driver, rest)', lambda f: f.startswith('io/csi4j/driver')),
    ('gRPC, Netty, sdk interceptors, protobuf parse (the request)', lambda f: f.startswith(('io/grpc', 'io/netty', 'io/csi4j/sdk', 'com/google/protobuf', 'io/csi4j/proto', 'sun/nio/ch'))),
]

events = json.load(open(sys.argv[1]))['recording']['events']
counts = collections.Counter()
for e in events:
    frames = [f['method']['type']['name'] + '.' + f['method']['name'] for f in e['values']['stackTrace']['frames']]
    for label, rule in RULES:
        if any(rule(f) for f in frames):
            counts[label] += 1
            break
    else:
        counts['other (JDK, GC-free Java elsewhere)'] += 1
n = len(events)
print(f'{n} CPU-time samples')
for label, c in counts.most_common():
    print(f'  {100 * c / n:5.1f}%  {label}')
