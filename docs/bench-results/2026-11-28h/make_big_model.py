# one_task.bpmn with 240 KB of documentation on the process, as a Modeler file with embedded
# images carries (Camunda's realistic model: 244 KB). Output: /tmp/p30/one_task_big.bpmn
import re, base64, os
src = open('/work/shared/workloads/one_task.bpmn').read()
blob = base64.b64encode(os.urandom(180000)).decode()
m = re.search(r'(<bpmn:process[^>]*>)', src)
out = src[:m.end()] + f'<bpmn:documentation>{blob}</bpmn:documentation>' + src[m.end():]
open('/tmp/p30/one_task_big.bpmn', 'w').write(out)
