import sys, collections
path=sys.argv[1]; win=float(sys.argv[2]) if len(sys.argv)>2 else 0.1
evs=[]; cur=None
skip=('_rjem','je_','memcpy','memmove','memset','[unknown]','alloc::','core::ptr','<alloc::','__','do_rallocx','hashbrown','asm_exc','exc_page','handle_mm','do_user','clear_page','core::slice','bytes::','<bytes','std::','<core::','core::')
for line in open(path,errors='replace'):
    s=line.strip()
    if not s:
        if cur: evs.append(cur)
        cur=None; continue
    if line[0] not in ' \t':
        cur=[float(s.split(':')[0]), []]; continue
    p=s.split(None,1); sym=(p[1] if len(p)>1 else '?').rsplit(' (',1)[0]
    if cur is not None: cur[1].append(sym)
if cur: evs.append(cur)
t0=evs[0][0]
bins=collections.Counter(int((t-t0)/win) for t,_ in evs)
print("events",len(evs),"mean per window",len(evs)/max(bins.keys()))
top=bins.most_common(8)
for b,n in top:
    print(f"window {b*win:.1f}s: {n} faults ({n*4/1024:.1f} MiB)")
    c=collections.Counter()
    for t,st in evs:
        if int((t-t0)/win)==b:
            fr=[f for f in st if not f.startswith(skip)]
            c[' <- '.join(x[:70] for x in fr[:2])]+=1
    for k,v in c.most_common(4): print(f"   {v:5d} {k}")
