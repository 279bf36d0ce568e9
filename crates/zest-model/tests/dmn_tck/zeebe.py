"""Driver of zeebe.sh: deploys the TCK models on Zeebe and evaluates each case's decision."""
import json, os, re, subprocess, sys

zest, address, examples, inputs_path, outputs_path = sys.argv[1:6]

def model_path(name):  # DMN_3_0001 -> .../compatibility/level_3/3_0001.dmn
    level, number = re.match(r"DMN_(\d)_(\d+)", name).groups()
    return os.path.join(examples, "src", "compatibility", f"level_{level}", f"{level}_{number}.dmn")

def run(*args):
    r = subprocess.run([zest, *args, "--address", address, "--requestTimeout", "20s"],
                       capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr

decisions = {}  # model -> {decision name: decision id}
out = open(outputs_path, "w")
done = 0
for line in open(inputs_path):
    case_id, model, decision, variables = json.loads(line)
    if model not in decisions:
        decisions[model] = {}
        code, stdout, _ = run("deploy", model_path(model))
        if code == 0:
            for d in json.loads(stdout)["deployments"]:
                if "decision" in d:
                    decisions[model][d["decision"]["dmnDecisionName"]] = d["decision"]["dmnDecisionId"]
    decision_id = decisions[model].get(decision)
    output = None
    if decision_id:
        code, stdout, _ = run("evaluate", "decision", decision_id, "--variables", json.dumps(variables))
        if code == 0:
            result = json.loads(stdout)
            if not result.get("failureMessage"):
                output = json.loads(result["decisionOutput"]) if result["decisionOutput"] else None
    # a model Zeebe refused, or a decision it does not have: the case fails
    out.write(json.dumps([case_id, output, decision_id is not None]) + "\n")
    done += 1
    if done % 500 == 0:
        print(f"{done} cases", file=sys.stderr)
out.close()
deployed = sum(1 for d in decisions.values() if d)
print(f"Zeebe deployed {deployed} of {len(decisions)} models", file=sys.stderr)
