import sys,re
# tails.py FILE...: per run, commit-latency groups over 25/50/100 ms and commands over 100 ms, summed over partitions
for f in sys.argv[1:]:
    b={}
    for line in open(f):
        m=re.match(r'(zeebe_log_appender_commit_latency|zeebe_stream_processor_latency|zeebe_stream_processor_batch_processing_duration)_bucket\{partition="\d+",le="([^"]+)"\} (\d+)',line)
        if m: b[(m.group(1),m.group(2))]=b.get((m.group(1),m.group(2)),0)+int(m.group(3))
    c='zeebe_log_appender_commit_latency'; s='zeebe_stream_processor_latency'; p='zeebe_stream_processor_batch_processing_duration'
    tot=b[(c,'+Inf')]
    print(f"{f}: commits {tot}, >25ms {tot-b[(c,'0.025')]}, >50ms {tot-b[(c,'0.05')]}, >100ms {tot-b[(c,'0.1')]}; commands >100ms {b[(s,'+Inf')]-b[(s,'0.1')]} of {b[(s,'+Inf')]}; groups processed >25ms {b[(p,'+Inf')]-b[(p,'0.025')]}")
