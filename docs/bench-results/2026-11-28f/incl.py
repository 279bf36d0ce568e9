import sys, collections, re
path=sys.argv[1]; filt=sys.argv[2] if len(sys.argv)>2 else ''
stacks=[]; cur=None
for line in open(path, errors='replace'):
    if not line.strip():
        if cur is not None: stacks.append(cur)
        cur=None; continue
    if line[0] not in ' \t':
        cur=[]; continue
    parts=line.strip().split(None,1)
    sym=parts[1] if len(parts)>1 else '?'
    sym=re.sub(r'\+0x[0-9a-f]+$','',sym.rsplit(' (',1)[0])
    cur.append(sym)
if cur is not None: stacks.append(cur)
tot=len(stacks); c=collections.Counter()
for s in stacks:
    for f in set(s):
        if filt in f: c[f]+=1
for k,v in c.most_common(int(sys.argv[3]) if len(sys.argv)>3 else 60): print(f"{100*v/tot:5.1f}% {k[:150]}")
