#!/usr/bin/env python3
"""Hostile REST clients against a running `zest start` (issue 62; docs/benchmarks.md,
2026-12-07 (stop 69)): N connections from SOURCES loopback addresses (127.0.0.2, .3, ...),
each sending the head of a request with a 2 MB body and half of the body, then nothing
(or, with `silent`, nothing at all); meanwhile a normal client on 127.0.0.1 asks for the
topology and creates an instance of `benchmark` (deploy crates/zest/bench/one_task.bpmn
first) every 100 ms. Prints the node's RSS before, during (and its peak) and WAIT_S seconds
after, what the hostile connections were answered, how many are still open after WAIT_S,
and the normal client's latencies. Raise `ulimit -n` above N first.

usage: hostile_clients.py N SOURCES REST_PORT NODE_PID WAIT_S [silent]
"""
import socket, sys, time, threading, subprocess, json, http.client
silent=len(sys.argv)>6 and sys.argv[6]=="silent"
n=int(sys.argv[1]); nsrc=int(sys.argv[2]); port=int(sys.argv[3]); pid=int(sys.argv[4]); wait=float(sys.argv[5])
def rss():
    for l in open(f'/proc/{pid}/status'):
        if l.startswith('VmRSS'): return int(l.split()[1])//1024
peak=[0]; stop=[False]; lat=[]; errs=[0]
def sampler():
    while not stop[0]:
        try: peak[0]=max(peak[0], rss())
        except Exception: pass
        time.sleep(0.05)
def normal():
    body=json.dumps({"processDefinitionId":"benchmark"})
    while not stop[0]:
        for method,path,b in (("GET","/v2/topology",None),("POST","/v2/process-instances",body)):
            t=time.time()
            try:
                c=http.client.HTTPConnection('127.0.0.1',port,timeout=10)
                c.request(method,path,body=b,headers={"Content-Type":"application/json"} if b else {})
                r=c.getresponse(); r.read(); c.close()
                if r.status>=300: errs[0]+=1
                lat.append((time.time()-t)*1000)
            except Exception as e:
                errs[0]+=1
        time.sleep(0.1)
def pct(v,p):
    v=sorted(v); return v[min(len(v)-1,int(len(v)*p))] if v else None
before=rss()
threading.Thread(target=sampler,daemon=True).start()
# baseline latency for 2 s
th=threading.Thread(target=normal,daemon=True); th.start(); time.sleep(2)
base=list(lat); del lat[:]
head=b"POST /v2/process-instances HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n"
half=b' '*1000000
socks=[]; t0=time.time(); connfail=0
for i in range(n):
    s=socket.socket(); s.bind((f'127.0.0.{2+i%nsrc}',0)); s.settimeout(1)
    try:
        s.connect(('127.0.0.1',port))
        if not silent:
            s.sendall(head)
            try: s.sendall(half)
            except Exception: pass
    except Exception: connfail+=1
    socks.append(s)
sent=time.time()-t0
during=rss()
codes={}
for s in socks:
    s.settimeout(0.01)
    try: d=s.recv(64); k=d[:12].decode() if d else 'closed'
    except socket.timeout: k='no answer yet'
    except Exception as e: k='closed ('+type(e).__name__+')'
    codes[k]=codes.get(k,0)+1
attack=list(lat); del lat[:]
time.sleep(wait)
open_after=0
for s in socks:
    s.settimeout(0.01)
    try:
        while True:
            d=s.recv(65536)
            if not d: break
    except socket.timeout: open_after+=1
    except Exception: pass
    s.close()
after=rss(); stop[0]=True
print(json.dumps(dict(silent=silent,connections=n,sources=nsrc,sent_s=round(sent,1),connect_failures=connfail,rss_mib_before=before,rss_mib_during=during,rss_mib_peak=peak[0],rss_mib_after=after,answers=codes,still_open_after_wait=open_after,
  normal_before_p50_ms=pct(base,.5),normal_before_max_ms=max(base) if base else None,normal_during_n=len(attack),normal_during_p50_ms=pct(attack,.5),normal_during_p99_ms=pct(attack,.99),normal_during_max_ms=max(attack) if attack else None,normal_errors=errs[0]),indent=1))
