#!/usr/bin/env python3
"""Views of the CPU-time samples (jdk.CPUTimeSample) of a JFR recording that scripts/jfr-cpu-top.py does not give:
  scripts/jfr-cpu-tree.py FILE.jfr incl SUBSTRING [TOP]    inclusive share of every method whose frame contains SUBSTRING
  scripts/jfr-cpu-tree.py FILE.jfr under FRAME             what the deepest FRAME calls, by share
  scripts/jfr-cpu-tree.py FILE.jfr stacks FRAME [DEPTH]    the top DEPTH frames of the samples through FRAME
  scripts/jfr-cpu-tree.py FILE.jfr near FRAME [N]          the N nearest io.csi4j frames of the samples through FRAME
  scripts/jfr-cpu-tree.py FILE.jfr selfin FRAME            self (top) frames of the samples through FRAME
  scripts/jfr-cpu-tree.py FILE.jfr notunder A,B           samples through none of the frames A, B: self frame and nearest frame
  scripts/jfr-cpu-tree.py FILE.jfr cat                     every sample in the first of the control path's parts it is in
  scripts/jfr-cpu-tree.py FILE.jfr native                  Java code vs JDK native I/O vs SQLite's native code vs FFM downcalls
  scripts/jfr-cpu-tree.py FILE.jfr javapkg                 the Java-code samples by package, and by nearest csi4j driver frame
The samples are cached beside the recording as FILE.jfr.json. Needs the JDK's `jfr` (temurin 25's)."""
import json,subprocess,sys,collections,os
f=sys.argv[1]; mode=sys.argv[2] if len(sys.argv)>2 else "incl"; arg=sys.argv[3] if len(sys.argv)>3 else ""
jfr=os.path.join(os.environ.get("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64"), "bin", "jfr")
cache=f+".json"
if not os.path.exists(cache):
    out=subprocess.run([jfr,"print","--json","--stack-depth","128","--events","jdk.CPUTimeSample",f],capture_output=True,text=True,check=True).stdout
    open(cache,"w").write(out)
ev=json.load(open(cache))["recording"]["events"]
n=len(ev)
stacks=[]
for e in ev:
    fr=[x["method"]["type"]["name"].replace("/",".")+"."+x["method"]["name"]+":"+str(x.get("lineNumber","")) for x in ((e["values"].get("stackTrace") or {}).get("frames") or [])]
    stacks.append(fr)
strip=lambda s:s.rsplit(":",1)[0]
if mode=="incl":
    c=collections.Counter()
    for fr in stacks:
        for m in set(strip(x) for x in fr if arg in x): c[m]+=1
    for k,v in c.most_common(int(sys.argv[4]) if len(sys.argv)>4 else 80): print(f"{100*v/n:5.1f}% {k}")
elif mode=="stacks":  # stacks containing arg, collapsed to top 12 frames
    c=collections.Counter()
    for fr in stacks:
        if any(arg in x for x in fr): c[" < ".join(fr[:int(sys.argv[4]) if len(sys.argv)>4 else 8])]+=1
    for k,v in c.most_common(25): print(f"{100*v/n:5.1f}% {k}\n")
elif mode=="under":  # callees directly under frame arg
    c=collections.Counter()
    for fr in stacks:
        idx=[i for i,x in enumerate(fr) if arg in x]
        if idx:
            i=idx[-1]
            c[fr[i-1] if i>0 else "(self)"]+=1
    for k,v in c.most_common(40): print(f"{100*v/n:5.1f}% {k}")
if mode=="near":  # for samples containing arg, the nearest io.csi4j frames (chain of 3)
    c=collections.Counter()
    for fr in stacks:
        if any(arg in x for x in fr):
            ours=[x for x in fr if x.startswith("io.csi4j") and "Lambda" not in x and "lambda$" not in x][:int(sys.argv[4]) if len(sys.argv)>4 else 3]
            c[" < ".join(ours)]+=1
    for k,v in c.most_common(30): print(f"{100*v/n:5.1f}% {k}")
if mode=="notunder":  # samples NOT containing any of the comma list in arg: top self + nearest csi4j
    ex=arg.split(",")
    c=collections.Counter(); tot=0
    for fr in stacks:
        if fr and not any(any(e in x for x in fr) for e in ex):
            tot+=1
            ours=next((x for x in fr if x.startswith("io.csi4j") or x.startswith("io.grpc") or x.startswith("io.netty")),"-")
            c[strip(fr[0])+"  <- "+strip(ours)]+=1
    print(f"{100*tot/n:.1f}% total")
    for k,v in c.most_common(45): print(f"{100*v/n:5.1f}% {k}")
if mode=="cat":
    cats=[("sqlite","org.sqlite"),("loop look","LoopDevice.bound"),("sidecar","writeSidecar"),("WAL sync","GroupCommit.sync"),
          ("statx/FileStat","FileStat."),("capacity","PoolCapacity"),("validation","SpecValidator"),("json","driver.json"),
          ("image create (file)","ImageVolumes"),("pool layout other","PoolLayout"),("Libc other","driver.os.Libc"),
          ("proto parse","parseFrom"),("proto serialize","writeTo"),("logging","CallLog"),("metrics","Metrics"),
          ("event loop","SingleThreadIoEventLoop"),("fj scheduling","ForkJoinPool"),("ids","ObjectId"),("wire","WireMapping")]
    c=collections.Counter()
    for fr in stacks:
        for name,pat in cats:
            if any(pat in x for x in fr): c[name]+=1; break
        else: c["other: "+(strip(fr[0]) if fr else "-")]+=1
    other=sum(v for k,v in c.items() if k.startswith("other"))
    for k,v in c.most_common():
        if not k.startswith("other"): print(f"{100*v/n:5.1f}% {k}")
    print(f"{100*other/n:5.1f}% other, top:")
    for k,v in c.most_common():
        if k.startswith("other") and v>3: print(f"   {100*v/n:5.1f}% {k}")
if mode=="selfin":  # self frames (top) for samples containing arg
    c=collections.Counter(); tot=0
    for fr in stacks:
        if any(arg in x for x in fr):
            tot+=1; c[strip(fr[0])]+=1
    print(f"{100*tot/n:.1f}% total")
    for k,v in c.most_common(40): print(f"{100*v/n:5.1f}% {k}")
if mode=="native":
    import re
    c=collections.Counter()
    def kind(fr):
        t=strip(fr[0]) if fr else "-"
        if t.startswith("org.sqlite.core.NativeDB"): return "SQLite native (incl. its pwrite/pread/fcntl)"
        if "LambdaForm$MH" in t or "DowncallStub" in t: return "FFM downcalls (statx, open, ftruncate, rename, unlink...)"
        if re.search(r"(Dispatcher|FileInputStream|FileDescriptor|EPoll|EventFD|IOUtil)\.\w+0?$", t) or t.endswith("0") and t.split(".")[-1].endswith("0"): return "JDK native I/O (sockets, files, epoll, eventfd)"
        return "Java code"
    for fr in stacks: c[kind(fr)]+=1
    for k,v in c.most_common(): print(f"{100*v/n:5.1f}% {k}")
if mode=="javapkg":
    import re
    c=collections.Counter(); d=collections.Counter()
    for fr in stacks:
        if not fr: continue
        t=strip(fr[0])
        if t.startswith("org.sqlite.core.NativeDB") or "LambdaForm$MH" in t or "DowncallStub" in t or t.split(".")[-1].endswith("0"): continue
        c[".".join(t.split(".")[:3])]+=1
        ours=next((strip(x) for x in fr if x.startswith("io.csi4j") and "Lambda" not in x and "lambda$" not in x and "interceptor" not in x and "UnaryHandOff" not in x and "proto" not in x),"(no csi4j frame)")
        d[ours]+=1
    for k,v in c.most_common(15): print(f"{100*v/n:5.1f}% {k}")
    print()
    for k,v in d.most_common(25): print(f"{100*v/n:5.1f}% {k}")
