import collections
v=collections.defaultdict(dict); m={}
for line in open(__import__('sys').argv[1]):
    p=line.split()
    if len(p)<3: continue
    if p[1]=='metrics':
        for i,x in enumerate(p):
            if x.startswith('zest_state_disk'): m[int(p[0])]=int(p[i+1])
        continue
    v[int(p[0])][p[1]]=int(p[2])
ts=sorted(v)
for a,b in zip(ts,ts[1:]):
    d={k:v[b].get(k,0)-v[a].get(k,0) for k in v[b]}
    dt=b-a
    print(b-ts[0], ' '.join(f"{k}={d[k]/dt:.0f}%" for k in sorted(d)), f"state={m.get(b,0)/2**30:.2f}GiB")
