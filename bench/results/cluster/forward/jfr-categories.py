# Sorts JFR execution samples (jfr print --json --events jdk.ExecutionSample FILE) into what the controller spends CPU on:
# inclusive (a frame of the category anywhere on the stack) and by the innermost frame that falls in a category.
import json,collections,sys
d=json.load(open(sys.argv[1]))
ev=d['recording']['events']
n=len(ev)
threads=collections.Counter()
cats=collections.Counter(); selfcat=collections.Counter()
rules=[('TLS (sun.security, javax.crypto, SslHandler)',lambda s: s.startswith('sun/security') or 'SslHandler' in s or s.startswith('javax/crypto') or s.startswith('com/sun/crypto')),
('HTTP/2 frames + HPACK (netty codec.http2, grpc netty handlers)',lambda s:'codec/http2' in s or s.startswith('io/grpc/netty')),
('protobuf parse/serialize',lambda s:s.startswith('com/google/protobuf') or 'ProtoLiteUtils' in s),
('csi4j interceptors (sdk)',lambda s:s.startswith('io/csi4j/sdk')),
('csi4j cluster routing',lambda s:s.startswith('io/csi4j/driver')),
('gRPC core (io.grpc.internal, stub)',lambda s:s.startswith('io/grpc')),
('netty channel, buffers, event loop, NIO',lambda s:s.startswith('io/netty') or s.startswith('sun/nio') or s.startswith('java/nio')),
('logging',lambda s:s.startswith('java/util/logging')),
]
for e in ev:
    v=e['values']
    th=(v.get('sampledThread') or {}).get('javaName') or '?'
    threads[th.rstrip('0123456789-')]+=1
    names=[f['method']['type']['name']+'.'+f['method']['name'] for f in v['stackTrace']['frames']]
    for label,r in rules:
        if any(r(x) for x in names): cats[label]+=1
    # self: the first frame (from the top) that falls in a category, so JDK helpers count for their caller
    for x in names:
        hit=[label for label,r in rules if r(x)]
        if hit: selfcat[hit[0]]+=1; break
    else: selfcat['other']+=1
print('execution samples',n,'threads',dict(threads.most_common(6)))
print('inclusive:')
for k,c in cats.most_common(): print(f'  {k:62s} {c:4d} {100*c/n:5.1f}%')
print('by innermost category:')
for k,c in selfcat.most_common(): print(f'  {k:62s} {c:4d} {100*c/n:5.1f}%')
