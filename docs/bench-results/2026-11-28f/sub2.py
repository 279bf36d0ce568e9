import sys, collections, re
# callees (inclusive) under frames matching ARG: for each stack containing ARG, the frames above it (towards leaf)
path=sys.argv[1]; pat=sys.argv[2]; n=int(sys.argv[3]) if len(sys.argv)>3 else 40
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
tot=len(stacks); c=collections.Counter(); hit=0
for s in stacks:
    idx=[i for i,f in enumerate(s) if pat in f]
    if not idx: continue
    hit+=1
    top=max(idx)  # outermost occurrence (stack is leaf-first)
    for f in set(s[:top]): c[f]+=1
print(f"under {pat}: {100*hit/tot:.1f}%")
for k,v in c.most_common(n): print(f"{100*v/tot:5.1f}% {k[:140]}")
