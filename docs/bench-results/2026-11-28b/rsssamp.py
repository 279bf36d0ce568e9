import sys, time, os
pid=sys.argv[1]; out=open(sys.argv[2],'w'); dur=float(sys.argv[3])
end=time.monotonic()+dur
while time.monotonic()<end:
    try:
        with open(f'/proc/{pid}/status') as f:
            for l in f:
                if l.startswith('VmRSS'): out.write(f"{time.monotonic():.4f} {l.split()[1]}\n"); break
    except FileNotFoundError: break
    time.sleep(0.01)
