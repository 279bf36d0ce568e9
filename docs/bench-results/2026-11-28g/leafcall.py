import sys, collections, re
# for samples whose leaf matches PAT: the first caller frame not matching SKIP (regex), counted
path=sys.argv[1]; pat=sys.argv[2]; skip=re.compile(sys.argv[3]) if len(sys.argv)>3 else None; depth=int(sys.argv[4]) if len(sys.argv)>4 else 2
stacks=[]; cur=None
for line in open(path, errors='replace'):
    if not line.strip():
        if cur is not None: stacks.append(cur)
        cur=None; continue
    if line[0] not in ' \t':
        cur=[]; continue
    parts=line.strip().split(None,1)
    cur.append(parts[1] if len(parts)>1 else '?')
if cur is not None: stacks.append(cur)
tot=len(stacks); c=collections.Counter(); hit=0
for s in stacks:
    if not s or pat not in s[0]: continue
    hit+=1
    fr=[f for f in s[1:] if not (skip and skip.search(f))][:depth]
    c[' <- '.join(x[:90] for x in fr)]+=1
print(f"{pat}: {100*hit/tot:.1f}% of {tot}")
for k,v in c.most_common(25): print(f"{100*v/tot:5.1f}% {k}")
