package compat

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"zest/tests/compat/harness"
)

// DMN with the Go client: DeployResource lists the graph and its decisions, EvaluateDecision by
// id answers with the output, the evaluated decisions (required ones first) and the matched
// rules; a UNIQUE table with two matching rules answers with the failed decision; an unknown id
// is NOT_FOUND. The graph's ids carry a unique suffix ("pricing" is replaced throughout, and the
// decision ids get the suffix too).
func TestEvaluateDecision(t *testing.T) {
	suffix := harness.UniqueID("d")
	dmn := string(harness.Model(t, "pricing.dmn", "", ""))
	for _, id := range []string{"pricing", "discount", "price", "labels", "score"} {
		dmn = strings.ReplaceAll(dmn, `"`+id+`"`, `"`+id+suffix+`"`)
		dmn = strings.ReplaceAll(dmn, `"#`+id+`"`, `"#`+id+suffix+`"`)
	}
	dmn = strings.ReplaceAll(dmn, "(1 - discount)", "(1 - discount"+suffix+")")
	resp, err := cli.NewDeployResourceCommand().AddResource([]byte(dmn), "pricing.dmn").Send(harness.Ctx(t, 20*time.Second))
	if err != nil {
		t.Fatalf("deploy: %s", harness.Describe(err))
	}
	var decisions, graphs int
	for _, d := range resp.Deployments {
		if m := d.GetDecision(); m != nil {
			decisions++
			if m.Version != 1 || m.DecisionKey <= 0 || m.DmnDecisionRequirementsId != "pricing"+suffix {
				t.Errorf("decision metadata %v", m)
			}
		}
		if m := d.GetDecisionRequirements(); m != nil {
			graphs++
			if m.DmnDecisionRequirementsName != "Pricing" || m.ResourceName != "pricing.dmn" {
				t.Errorf("graph metadata %v", m)
			}
		}
	}
	if decisions != 4 || graphs != 1 {
		t.Fatalf("want 4 decisions and 1 graph, got %v", resp.Deployments)
	}

	cmd, err := cli.NewEvaluateDecisionCommand().DecisionId("price" + suffix).VariablesFromMap(map[string]any{"customer": "silver", "amount": 200})
	if err != nil {
		t.Fatal(err)
	}
	r, err := cmd.Send(harness.Ctx(t, 10*time.Second))
	if err != nil {
		t.Fatalf("evaluate: %s", harness.Describe(err))
	}
	if r.DecisionOutput != "190" || r.FailedDecisionId != "" {
		t.Errorf("output %q failed %q: %s", r.DecisionOutput, r.FailedDecisionId, r.FailureMessage)
	}
	if len(r.EvaluatedDecisions) != 2 || r.EvaluatedDecisions[0].DecisionId != "discount"+suffix {
		t.Fatalf("evaluated decisions %v", r.EvaluatedDecisions)
	}
	table := r.EvaluatedDecisions[0]
	if len(table.MatchedRules) != 1 || table.MatchedRules[0].RuleId != "silver" || table.MatchedRules[0].RuleIndex != 3 {
		t.Errorf("matched rules %v", table.MatchedRules)
	}
	var out any
	if err := json.Unmarshal([]byte(table.DecisionOutput), &out); err != nil || out != 0.05 {
		t.Errorf("table output %q", table.DecisionOutput)
	}

	_, err = cli.NewEvaluateDecisionCommand().DecisionId("nope" + suffix).Send(harness.Ctx(t, 10*time.Second))
	wantCode(t, "evaluating an unknown decision", err, codes.NotFound)
}
