#!/usr/bin/env python3
"""Writes models/feel_builtins.bpmn from feel_builtins.txt: a script task whose expression is one
FEEL context with an entry per line. Then `./regen.sh feel_builtins` records Zeebe's values."""
import os
from xml.sax.saxutils import quoteattr

here = os.path.dirname(os.path.abspath(__file__))
entries = []
for line in open(os.path.join(here, "feel_builtins.txt")):
    line = line.rstrip("\n")
    if line.strip() and not line.startswith("#"):
        name, expression = line.split("|", 1)
        entries.append(f"{name}: {expression}")
context = "{" + ", ".join(entries) + "}"
model = f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- Made by gen_feel_builtins.py from feel_builtins.txt: every FEEL built-in function of Camunda
     8.8 (FEEL-scala), one context entry each. -->
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="feel_builtins" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="script" />
    <bpmn:scriptTask id="script">
      <bpmn:extensionElements><zeebe:script expression={quoteattr("=" + context)} resultVariable="r" /></bpmn:extensionElements>
    </bpmn:scriptTask>
    <bpmn:sequenceFlow id="f2" sourceRef="script" targetRef="end" />
    <bpmn:endEvent id="end" />
  </bpmn:process>
</bpmn:definitions>
"""
open(os.path.join(here, "models", "feel_builtins.bpmn"), "w").write(model)
