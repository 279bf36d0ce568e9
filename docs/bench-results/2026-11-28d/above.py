import sys, collections
path, target = sys.argv[1], sys.argv[2]
depth = int(sys.argv[3]) if len(sys.argv) > 3 else 1
stacks=[]; cur=[]
for line in open(path, errors='replace'):
    if not line.strip():
        if cur: stacks.append(cur)
        cur=[]; continue
    if line[0] not in ' \t':
        cur=[]; continue
    parts=line.strip().split(None,1)
    sym=parts[1] if len(parts)>1 else '?'
    sym=sym.rsplit(' (',1)[0]
    cur.append(sym)
if cur: stacks.append(cur)
total=len(stacks); hit=0; c=collections.Counter()
for s in stacks:
    idx=[i for i,f in enumerate(s) if target in f]
    if not idx: continue
    hit+=1
    i=max(idx)
    key=' <- '.join(s[i+1:i+1+depth])
    c[key]+=1
print(f"total {total} hit {hit} ({100*hit/total:.1f}%)")
for k,v in c.most_common(30): print(f"{100*v/total:5.1f}% {k[:230]}")
