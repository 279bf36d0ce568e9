import sys
# latsum.py FILE [BUCKET_S]: median and max latency per bucket of creation time, and where the slowest 1 % were created
rows=[tuple(map(float,l.split(','))) for l in open(sys.argv[1])]
b=float(sys.argv[2]) if len(sys.argv)>2 else 5
buckets={}
for c,l in rows: buckets.setdefault(int(c//b),[]).append(l)
print(f"{'created':>9} {'n':>4} {'p50 ms':>7} {'max ms':>7}")
for k in sorted(buckets):
    v=sorted(buckets[k]); print(f"{k*b:5.0f}-{(k+1)*b:<3.0f} {len(v):4d} {v[len(v)//2]:7.0f} {v[-1]:7.0f}")
rows.sort(key=lambda r:-r[1]); top=rows[:max(1,len(rows)//100)]
print("slowest 1 %: created at", ' '.join(f"{c:.1f}" for c,_ in sorted(top)))
