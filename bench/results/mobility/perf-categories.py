# Sorts `perf script` samples of the two agents into what a copy spends CPU on: the first rule (in order) that any
# frame of a sample matches. Used for perf-warm-copies.txt.
import sys,collections,re
rules=[
 ('C2/C1 compiler', lambda t,f: t.startswith('C2 Compiler') or t.startswith('C1 Compiler')),
 ('GC / VM thread', lambda t,f: t.startswith('VM Thread') or t.startswith('GC')),
 ('netty leak detector traces', lambda t,f: any('ResourceLeakDetector' in x for x in f)),
 ('file write (pwrite into page cache)', lambda t,f: any('UnixFileDispatcherImpl.pwrite' in x or 'IOUtil.write' in x and 'FileChannel' in ' '.join(f) for x in f)),
 ('file read (pread)', lambda t,f: any('UnixFileDispatcherImpl.pread' in x or 'FileChannelImpl.read' in x for x in f)),
 ('flush (fdatasync)', lambda t,f: any('force' in x and 'FileChannel' in x for x in f)),
 ('TLS (tcnative/BoringSSL)', lambda t,f: any('tcnative' in x.lower() or 'OpenSslEngine' in x for x in f[:6])),
 ('socket write', lambda t,f: any(k in x for x in f for k in ('tcp_sendmsg','sock_write_iter','writev','SocketDispatcher.write','IOUtil.write'))),
 ('socket read', lambda t,f: any(k in x for x in f for k in ('tcp_recvmsg','sock_read_iter','SocketDispatcher.read','IOUtil.read'))),
 ('SslHandler (wrap/unwrap glue, coalescing, cumulation)', lambda t,f: any('SslHandler' in x or 'ByteToMessageDecoder' in x or 'CoalescingBufferQueue' in x for x in f)),
 ('CRC32C / zero check', lambda t,f: any('CRC32C' in x or 'isZero' in x or 'mismatch' in x for x in f)),
 ('gRPC framer (sender copy into frames)', lambda t,f: any('MessageFramer' in x for x in f)),
 ('gRPC deframer + protobuf parse', lambda t,f: any('MessageDeframer' in x or 'CompositeReadableBuffer' in x or 'protobuf' in x for x in f)),
 ('HTTP/2 codec', lambda t,f: any('codec.http2' in x for x in f)),
 ('netty buffers/alloc', lambda t,f: any('io.netty.buffer' in x for x in f)),
 ('scheduling/futex/park', lambda t,f: any(k in x for x in f for k in ('futex','schedule','finish_task_switch','Unsafe.park','LockSupport','Continuation'))),
]
cnt=collections.Counter(); n=0
block=[]
def flush(block):
    global n
    if not block: return
    head=block[0]; frames=[l.strip().split(' ',1)[1] if ' ' in l.strip() else l.strip() for l in block[1:]]
    # thread name: perf script header "comm pid/tid ..."
    t=head.split()[0] if head else '?'
    m=re.match(r'\s*(.+?)\s+\d+(/\d+)?\s', head)
    t=m.group(1) if m else t
    n+=1
    for name,r in rules:
        if r(t,frames): cnt[name]+=1; return
    cnt['other: '+(frames[0][:60] if frames else '?')]+=1
for line in sys.stdin:
    if line.strip()=='' :
        flush(block); block=[]
    else: block.append(line.rstrip('\n'))
flush(block)
print('samples',n)
other=sum(v for k,v in cnt.items() if k.startswith('other'))
for k,v in cnt.most_common():
    if not k.startswith('other'): print(f'{100*v/n:5.1f}%  {k}')
print(f'{100*other/n:5.1f}%  other (top:)')
for k,v in [kv for kv in cnt.most_common() if kv[0].startswith('other')][:12]: print(f'      {100*v/n:5.1f}% {k}')
