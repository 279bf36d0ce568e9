import sys, collections
# usage: below.py SCRIPT FUNCSUBSTR [depth]
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
total=len(stacks)
hit=0; c=collections.Counter()
for s in stacks:
    # s[0] is leaf
    idx=[i for i,f in enumerate(s) if target in f]
    if not idx: continue
    hit+=1
    i=max(idx)  # outermost occurrence
    key=' <- '.join(reversed(s[max(0,i-depth):i])) if i>0 else '(self)'
    c[key]+=1
print(f"total {total} hit {hit} ({100*hit/total:.1f}%)")
for k,v in c.most_common(25): print(f"{100*v/total:5.1f}% {k[:200]}")
