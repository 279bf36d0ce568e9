import sys, collections
path=sys.argv[1]
stacks=[]; cur=None; comm=None
for line in open(path, errors='replace'):
    if not line.strip():
        if cur is not None: stacks.append((comm,cur))
        cur=None; continue
    if line[0] not in ' \t':
        comm=line.split()[0]; cur=[]; continue
    parts=line.strip().split(None,1)
    sym=parts[1] if len(parts)>1 else '?'
    cur.append(sym.rsplit(' (',1)[0])
if cur is not None: stacks.append((comm,cur))
tot=len(stacks)
c=collections.Counter(s[0] for s in stacks)
print("total",tot)
for k,v in c.most_common(12): print(f"{100*v/tot:5.1f}% {k}")
cats=[("fjall commit_state","commit_state"),("fjall flush/compact","lsm_tree::compaction"),("flush","flush_memtable"),("lsm any","lsm_tree"),("fjall any","fjall::"),("engine process","Engine::process"),("apply_record","apply_record"),("process_group","process_group"),("encode_entry","encode_entry"),("gateway","zest_gateway"),("tonic/h2","h2::"),("job_streams","job_streams"),("speculative/BTree","BTreeMap"),("memcpy","memcpy"),("malloc","_rjem"),("serde_json","serde_json"),("postcard","postcard"),("syscall write/fsync","fdatasync"),("log_store","log_store"),("openraft","openraft"),("dsntk/feel","zest_feel"),("Txn::get/base","base_value"),("layered get","Layered"),("store get","PartitionStore"),("kernel","[unknown]")]
for name,pat in cats:
    n=sum(1 for s in stacks if any(pat in f for f in s[1]))
    print(f"{100*n/tot:5.1f}% {name}")
