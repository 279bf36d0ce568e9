import os, time, resource, sys
mode=sys.argv[1]
fn='/work/fscpu.tmp'
fd=os.open(fn, os.O_RDWR|os.O_CREAT|os.O_TRUNC)
if mode=='falloc': os.posix_fallocate(fd,0,64<<20)
elif mode=='zero':
    z=b'\0'*(1<<20)
    for i in range(64): os.write(fd,z)
    os.fsync(fd)
buf=b'x'*8192
N=2000
r0=resource.getrusage(resource.RUSAGE_SELF); t0=time.time()
for i in range(N):
    os.pwrite(fd,buf,i*8192)
    os.fdatasync(fd)
r1=resource.getrusage(resource.RUSAGE_SELF); t1=time.time()
print(mode,"wall per op ms %.3f"%((t1-t0)/N*1000), "sys us %.0f"%((r1.ru_stime-r0.ru_stime)/N*1e6))
os.close(fd); os.unlink(fn)
