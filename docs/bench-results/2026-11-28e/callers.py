import sys, collections, re
# callers (function names, offsets stripped) of a leaf target, aggregated; depth = how many frames up
path, target = sys.argv[1], sys.argv[2]; depth=int(sys.argv[3]) if len(sys.argv)>3 else 1
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
    if s and target in s[0]:
        hit+=1
        # skip allocator / generic frames
        frames=[f for f in s[1:] if not re.match(r'(alloc::|core::|_rjem|do_rallocx|<alloc|<core)',f)]
        c[' <- '.join(f[:90] for f in frames[:depth])]+=1
print(f"total {tot} hit {100*hit/tot:.1f}%")
for k,v in c.most_common(25): print(f"{100*v/tot:5.2f}% {k}")
