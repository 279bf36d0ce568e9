import sys, collections
# parse perf script: blocks separated by blank lines; first line "TIME: "
blocks=[]; cur=None
for line in open(sys.argv[1]):
    line=line.rstrip('\n')
    if not line.strip():
        if cur: blocks.append(cur); cur=None
        continue
    if not line.startswith('\t') and line.strip().endswith(':'):
        cur=[float(line.strip()[:-1]), []]
    elif cur is not None:
        parts=line.split(None,1)
        cur[1].append(parts[1] if len(parts)>1 else '?')
if cur: blocks.append(cur)
B=float(sys.argv[2]) if len(sys.argv)>2 else 0.1
buckets=collections.Counter(int(b[0]/B) for b in blocks)
t0=min(b[0] for b in blocks)
top=buckets.most_common(6)
print("total samples", len(blocks), "x8 faults x4KiB =", len(blocks)*8*4/1024, "MiB")
for k,c in top: print("bucket t=%.1f samples %d (~%.1f MiB)"%(k*B-t0, c, c*8*4/1024))
def key(st):
    # first frame within zest/fjall/lsm/h2/tonic etc, skipping allocator/memcpy
    fr=[f for f in st if not any(x in f for x in ('je_','rjem','memmove','memcpy','memset','alloc::','raw_vec','__rust','[unknown]','core::ptr','<alloc'))]
    return ' <- '.join(fr[:4])
for k,c in top[:3]:
    cnt=collections.Counter(key(b[1]) for b in blocks if int(b[0]/B)==k)
    print("\n== bucket t=%.1f"%(k*B-t0))
    for s,n in cnt.most_common(8): print(n, s[:400])
