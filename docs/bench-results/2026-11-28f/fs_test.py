import os, time, resource
def run(path, mode, n=2000, sz=8192):
    fd = os.open(path, os.O_RDWR|os.O_CREAT|os.O_TRUNC)
    total = n*sz + (1<<20)
    if mode == 'fallocate':
        os.posix_fallocate(fd, 0, total)
    elif mode == 'zero':
        os.write(fd, b'\0'*total); os.fsync(fd)
    # 'append': nothing
    buf = os.urandom(sz)
    r0 = resource.getrusage(resource.RUSAGE_SELF); t0 = time.time()
    for i in range(n):
        os.pwrite(fd, buf, i*sz)
        os.fdatasync(fd)
    t1 = time.time(); r1 = resource.getrusage(resource.RUSAGE_SELF)
    os.close(fd); os.unlink(path)
    print(f"{mode:10s} {n} x ({sz} B + fdatasync): {1e3*(t1-t0)/n:.3f} ms each, sys {1e3*(r1.ru_stime-r0.ru_stime)/n:.3f} ms, user {1e3*(r1.ru_utime-r0.ru_utime)/n:.3f} ms")
for m in ['fallocate','zero','append','fallocate','zero']:
    run('/work/fs_test.bin', m)
