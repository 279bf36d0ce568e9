# metrics-means.py NAME...: means of a run's final /metrics (real7.sh saves them as NAME-final-metrics.txt)
import sys
for f in sys.argv[1:]:
    m={}
    for l in open(f'/tmp/p30/{f}-final-metrics.txt'):
        if l.startswith('#'): continue
        k,_,v=l.rpartition(' ')
        m[k]=float(v)
    def mean(n):
        s=sum(v for k,v in m.items() if k.startswith(n+'_sum'))
        c=sum(v for k,v in m.items() if k.startswith(n+'_count'))
        return (s/c*1000 if c else 0), c
    print(f, "command latency %.2f ms" % mean('zeebe_stream_processor_latency')[0],
          "| groups %d, processing %.2f ms" % (mean('zeebe_stream_processor_batch_processing_duration')[1], mean('zeebe_stream_processor_batch_processing_duration')[0]),
          "| appended to retired %.2f ms" % mean('zeebe_log_appender_commit_latency')[0])
