"""Extracts the DMN TCK cases (compliance levels 2 and 3) that dsntk-model-evaluator 0.3.0 checks
in its own tests: model, decision (by name), input (FEEL context text), expected result (FEEL
text, as dsntk prints it). Writes cases.jsonl (one JSON array per case: test, model, decision,
input, expected) and models.rs (the dsntk-examples constant of each model) next to itself.

    cargo fetch   # so that ~/.cargo/registry holds dsntk-model-evaluator 0.3.0
    python3 crates/zest-model/tests/dmn_tck/extract.py
"""
import re, os, json, sys, glob
root = glob.glob(os.path.expanduser('~/.cargo/registry/src/*/dsntk-model-evaluator-0.3.0/src/tests/compatibility'))[0]
STR = r'(?:r#+"[\s\S]*?"#+|"(?:[^"\\]|\\.)*")'
ARG = r'(?:' + STR + r'|&?\w+)'
def unquote(tok):
    tok = tok.strip()
    m = re.match(r'r(#+)"([\s\S]*)"\1$', tok)
    if m: return m.group(2)
    if tok.startswith('"'): return json.loads(tok)
    return None
def split_args(text):
    return [a.strip() for a in re.findall(ARG, text)]
cases, unparsed = [], 0
for level in ('level_2', 'level_3'):
    for path in sorted(glob.glob(f'{root}/{level}/dmn_*.rs')):
        src = open(path).read()
        m = re.search(r'from_examples!\((\w+)\)', src)
        if not m: continue
        model = m.group(1)
        consts = {}
        for cm in re.finditer(r'const (\w+): &str = (' + STR + r');', src):
            consts[cm.group(1)] = unquote(cm.group(2))
        for cm in re.finditer(r'static_context!\(\s*(\w+),\s*(' + STR + r'|\w+)\s*\);', src):
            tok = cm.group(2)
            consts[cm.group(1)] = unquote(tok) if unquote(tok) is not None else consts.get(tok)
        helpers = {}
        for hm in re.finditer(r'fn (\w+)\(([^)]*)\)\s*\{\s*assert_decision\(\s*&MODEL_EVALUATOR,\s*&MODEL_NAMESPACE,\s*&MODEL_NAME,\s*(' + ARG + r'),\s*(' + ARG + r'),\s*(' + ARG + r'),?\s*\);\s*\}', src):
            params = [p.split(':')[0].strip() for p in hm.group(2).split(',') if p.strip()]
            helpers[hm.group(1)] = (params, hm.group(3), hm.group(4).lstrip('&'), hm.group(5))
        helpers['assert_decision'] = (['e', 'n', 'm', 'invocable', 'ctx', 'expected'], 'invocable', 'ctx', 'expected')
        for fm in re.finditer(r'#\[test\]\s*fn (\w+)\(\) \{([\s\S]*?)\n\}', src):
            name, body = fm.group(1), fm.group(2)
            lets = {}
            for lm in re.finditer(r'let (\w+) = (?:context\(\s*)?(' + STR + r'|\w+),?\s*\)?;', body):
                tok = lm.group(2)
                lets[lm.group(1)] = unquote(tok) if unquote(tok) is not None else consts.get(tok)
            def val(tok, bound):
                tok = tok.strip().lstrip('&')
                u = unquote(tok)
                if u is not None: return u
                if tok in bound: return bound[tok]
                return lets.get(tok, consts.get(tok))
            found = None
            for call in re.finditer(r'\b(\w+)\(([\s\S]*?)\);', body):
                if call.group(1) not in helpers: continue
                params, inv, ctx, exp = helpers[call.group(1)]
                args = split_args(call.group(2))
                if len(args) != len(params): continue
                bound = {p: val(a, {}) for p, a in zip(params, args)}
                found = (val(inv, bound), val(ctx, bound), val(exp, bound))
            if not found or None in found:
                unparsed += 1; continue
            invocable, ctx, expected = found
            cases.append({"model": model, "test": f"{level}/{os.path.basename(path)[:-3]}/{name}",
                          "decision": invocable, "input": ctx.strip(), "expected": expected.strip()})
print(len(cases), "cases,", unparsed, "unparsed", file=sys.stderr)
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, 'cases.jsonl'), 'w') as out:
    for c in cases:
        out.write(json.dumps([c["test"], c["model"], c["decision"], c["input"], c["expected"]], ensure_ascii=False) + "\n")
models = sorted({c["model"] for c in cases})
with open(os.path.join(here, 'models.rs'), 'w') as out:
    out.write("// Made by tests/dmn_tck/extract.py: the DMN TCK models of dsntk-examples by name.\n")
    out.write("pub fn model(name: &str) -> Option<&'static str> {\n    Some(match name {\n")
    for m in models:
        out.write(f'        "{m}" => dsntk_examples::{m},\n')
    out.write("        _ => return None,\n    })\n}\n")
