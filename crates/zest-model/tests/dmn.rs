//! DMN tests: the anchor models (results measured on Zeebe 8.8), the realistic workload, every hit
//! policy, the deploy-time problems, and a no-panic property test on mangled resources.

use proptest::prelude::*;
use serde_json::{json, Value};
use zest_model::dmn::*;
use zest_model::parse_dmn;

fn vars(value: Value) -> Variables {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn anchor(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../tests/anchor/models/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn parse_ok(xml: &str) -> DecisionRequirements {
    parse_dmn("test.dmn", xml.as_bytes()).unwrap_or_else(|e| panic!("{e}"))
}

fn parse_err(xml: &str) -> ModelErrorText {
    match parse_dmn("test.dmn", xml.as_bytes()) {
        Ok(_) => panic!("expected problems for:\n{xml}"),
        Err(e) => ModelErrorText(e.to_string(), e.problems.len()),
    }
}

/// A rejected resource: the full message and the number of problems.
struct ModelErrorText(String, usize);

impl ModelErrorText {
    fn has(&self, part: &str) -> &Self {
        assert!(self.0.contains(part), "{part:?} not in:\n{}", self.0);
        self
    }
}

fn eval(drg: &DecisionRequirements, id: &str, variables: Value) -> Evaluation {
    drg.evaluate(id, &vars(variables))
        .unwrap_or_else(|| panic!("no decision {id}"))
}

fn ok(evaluation: &Evaluation) -> Value {
    match &evaluation.result {
        Ok(value) => value.clone(),
        Err(e) => panic!("failed: {}", e.message),
    }
}

/// `id(name)=value;...` for the inputs of an evaluated decision.
fn inputs(decision: &EvaluatedDecision) -> String {
    decision
        .inputs
        .iter()
        .map(|i| format!("{}({})={};", i.id, i.name, i.value))
        .collect()
}

/// `rule#index{output(name)=value;}...` for the matched rules of an evaluated decision.
fn rules(decision: &EvaluatedDecision) -> String {
    decision
        .matched_rules
        .iter()
        .map(|r| {
            let outputs: String = r
                .outputs
                .iter()
                .map(|o| format!("{}({})={};", o.id, o.name, o.value))
                .collect();
            format!("{}#{}{{{outputs}}}", r.id, r.index)
        })
        .collect()
}

const HEAD: &str = r##"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="drg" name="DRG" namespace="http://camunda.org/schema/1.0/dmn">
"##;
const TAIL: &str = "\n</definitions>\n";

/// A resource with `body` inside `definitions` (the body starts on line 3).
fn dmn(body: &str) -> String {
    format!("{HEAD}{body}{TAIL}")
}

/// A decision `d` with a decision table: `inputs` are input expressions, `outputs` output names,
/// each rule is (input entries, output entries).
fn table(
    hit_policy: &str,
    inputs: &[&str],
    outputs: &[&str],
    rules: &[(&[&str], &[&str])],
) -> String {
    let mut xml = format!(r##"<decision id="d" name="D"><decisionTable id="t" {hit_policy}>"##);
    for (i, input) in inputs.iter().enumerate() {
        xml += &format!(
            r##"<input id="i{i}"><inputExpression><text>{input}</text></inputExpression></input>"##
        );
    }
    for (i, output) in outputs.iter().enumerate() {
        xml += &format!(r##"<output id="o{i}" name="{output}" />"##);
    }
    for (r, (ins, outs)) in rules.iter().enumerate() {
        xml += &format!(r##"<rule id="r{r}">"##);
        for entry in ins.iter() {
            xml += &format!("<inputEntry><text>{entry}</text></inputEntry>");
        }
        for entry in outs.iter() {
            xml += &format!("<outputEntry><text>{entry}</text></outputEntry>");
        }
        xml += "</rule>";
    }
    xml += "</decisionTable></decision>";
    dmn(&xml)
}

// ---------------------------------------------------------------------------------------------
// The anchor models, with Zeebe 8.8's results

#[test]
fn anchor_pricing_graph_parses() {
    let drg = parse_dmn("decisions.dmn", &anchor("decisions.dmn")).unwrap();
    assert_eq!(drg.id, "pricing");
    assert_eq!(drg.name, "Pricing");
    assert_eq!(drg.namespace, "http://camunda.org/schema/1.0/dmn");
    let ids: Vec<&str> = drg.decisions.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, ["discount", "price", "labels", "score"]);
    let price = drg.decision("price").unwrap();
    assert_eq!(price.required, ["discount"]);
    assert_eq!(price.result_name, "price");
    assert_eq!(price.logic.type_name(), "LITERAL_EXPRESSION");
    let DecisionLogic::Table(discount) = &drg.decision("discount").unwrap().logic else {
        panic!("discount is a table");
    };
    assert_eq!(discount.hit_policy, HitPolicy::Unique);
    assert_eq!(discount.inputs.len(), 2);
    assert_eq!(discount.rules.len(), 4);
    assert!(discount.rules[2].input_entries[1].is_none());
    let DecisionLogic::Table(score) = &drg.decision("score").unwrap().logic else {
        panic!("score is a table");
    };
    assert_eq!(score.hit_policy, HitPolicy::Collect);
    assert_eq!(score.aggregation, Some(Aggregation::Sum));
    assert_eq!(score.inputs[0].name, "amount");
    assert_eq!(score.outputs[0].label, "points");
    assert!(drg.decision("nope").is_none());
    assert!(drg.evaluate("nope", &Variables::new()).is_none());
}

#[test]
fn anchor_price_requires_discount() {
    let drg = parse_dmn("decisions.dmn", &anchor("decisions.dmn")).unwrap();
    let e = eval(&drg, "price", json!({"customer": "gold", "amount": 150}));
    assert_eq!(ok(&e), json!(120));
    assert_eq!(e.evaluated.len(), 2);
    let discount = &e.evaluated[0];
    assert_eq!(discount.decision_id, "discount");
    assert_eq!(discount.decision_name, "Discount");
    assert_eq!(discount.decision_type, "DECISION_TABLE");
    assert_eq!(discount.output, json!(0.2));
    assert_eq!(
        inputs(discount),
        r##"in_customer(Customer)="gold";in_amount(Amount)=150;"##
    );
    assert_eq!(rules(discount), "gold_big#1{out_rate(Rate)=0.2;}");
    let price = &e.evaluated[1];
    assert_eq!(price.decision_id, "price");
    assert_eq!(price.decision_type, "LITERAL_EXPRESSION");
    assert_eq!(price.output, json!(120));
    assert!(price.inputs.is_empty() && price.matched_rules.is_empty());

    // No rule matches: discount is null, and so is the price (not a failure).
    let e = eval(&drg, "price", json!({"customer": "other", "amount": 5}));
    assert_eq!(ok(&e), json!(null));
    assert_eq!(e.evaluated[0].output, json!(null));
    assert_eq!(
        inputs(&e.evaluated[0]),
        r##"in_customer(Customer)="other";in_amount(Amount)=5;"##
    );
    assert_eq!(rules(&e.evaluated[0]), "");
    assert_eq!(e.evaluated[1].output, json!(null));

    // The other rules of the table.
    let e = eval(&drg, "discount", json!({"customer": "gold", "amount": 50}));
    assert_eq!(ok(&e), json!(0.1));
    let e = eval(&drg, "discount", json!({"customer": "bronze"}));
    assert_eq!(ok(&e), json!(0.05));
    assert_eq!(
        inputs(&e.evaluated[0]),
        r##"in_customer(Customer)="bronze";in_amount(Amount)=null;"##
    );
    let e = eval(&drg, "discount", json!({"customer": "x", "amount": 1000}));
    assert_eq!(ok(&e), json!(0.01));
    assert_eq!(rules(&e.evaluated[0]), "any_big#4{out_rate(Rate)=0.01;}");
}

#[test]
fn anchor_collect_with_two_outputs_and_sum() {
    let drg = parse_dmn("decisions.dmn", &anchor("decisions.dmn")).unwrap();
    let e = eval(&drg, "labels", json!({"customer": "gold", "amount": 150}));
    let expected = json!([{"label": "big", "weight": 2}, {"label": "any", "weight": 1}]);
    assert_eq!(ok(&e), expected);
    // Output order is kept in the objects.
    assert_eq!(
        serde_json::to_string(&ok(&e)).unwrap(),
        r##"[{"label":"big","weight":2},{"label":"any","weight":1}]"##
    );
    assert_eq!(e.evaluated.len(), 1);
    assert_eq!(inputs(&e.evaluated[0]), "in_amount2(Amount)=150;");
    assert_eq!(
        rules(&e.evaluated[0]),
        r##"l1#1{out_label(Label)="big";out_weight(Weight)=2;}l2#2{out_label(Label)="any";out_weight(Weight)=1;}"##
    );

    let e = eval(&drg, "score", json!({"customer": "gold", "amount": 150}));
    assert_eq!(ok(&e), json!(12));
    assert_eq!(inputs(&e.evaluated[0]), "in_amount3(amount)=150;");
    assert_eq!(
        rules(&e.evaluated[0]),
        "s1#1{out_points(points)=5;}s2#2{out_points(points)=7;}"
    );

    let e = eval(&drg, "labels", json!({"customer": "other", "amount": 5}));
    assert_eq!(ok(&e), json!([{"label": "any", "weight": 1}]));
    assert_eq!(
        rules(&e.evaluated[0]),
        r##"l2#2{out_label(Label)="any";out_weight(Weight)=1;}"##
    );
    let e = eval(&drg, "score", json!({"customer": "other", "amount": 5}));
    assert_eq!(ok(&e), json!(null));
    assert_eq!(rules(&e.evaluated[0]), "");
}

#[test]
fn anchor_late_decisions() {
    let drg = parse_dmn("decisions_late.dmn", &anchor("decisions_late.dmn")).unwrap();
    assert_eq!(drg.id, "late");

    let e = eval(&drg, "tier", json!({"customer": "silver", "amount": 150}));
    let failure = e.result.as_ref().unwrap_err();
    assert_eq!(failure.decision_id, "tier");
    assert_eq!(
        failure.message,
        r##"Expected to evaluate decision 'tier', but multiple values aren't allowed for UNIQUE hit policy. found: 'List(Map(tier -> "medium"), Map(tier -> "large"))'"##
    );
    assert_eq!(e.evaluated.len(), 1);
    assert_eq!(e.evaluated[0].decision_id, "tier");
    assert_eq!(e.evaluated[0].output, json!(null));
    assert_eq!(inputs(&e.evaluated[0]), "tier_in(Amount)=150;");
    assert_eq!(
        rules(&e.evaluated[0]),
        r##"t1#1{tier_out(tier)="medium";}t2#2{tier_out(tier)="large";}"##
    );

    let e = eval(&drg, "tier", json!({"customer": "silver", "amount": 50}));
    assert_eq!(ok(&e), json!("medium"));

    let e = eval(
        &drg,
        "first_tier",
        json!({"customer": "silver", "amount": 50}),
    );
    assert_eq!(
        serde_json::to_string(&ok(&e)).unwrap(),
        r##"{"tier":"medium","rank":5}"##
    );
    assert_eq!(
        rules(&e.evaluated[0]),
        r##"ft1#1{ft_out(tier)="medium";ft_out2(rank)=5;}"##
    );
    let e = eval(&drg, "first_tier", json!({"amount": 150}));
    assert_eq!(ok(&e), json!({"tier": "medium", "rank": 15}));
    assert_eq!(e.evaluated[0].matched_rules.len(), 1);

    let e = eval(&drg, "no_such_decision", json!({"customer": "silver"}));
    assert_eq!(ok(&e), json!("deployed silver"));
    assert_eq!(e.evaluated[0].decision_type, "LITERAL_EXPRESSION");
}

/// The realistic workload's decision (COLLECT, 3 inputs, 2 outputs), with its payload.
#[test]
fn realistic_fraud_rating() {
    let dir = format!(
        "{}/../../../shared/workloads/realistic",
        env!("CARGO_MANIFEST_DIR")
    );
    let (Ok(xml), Ok(payload)) = (
        std::fs::read(format!("{dir}/determineFraudRatingConfidence.dmn")),
        std::fs::read(format!("{dir}/realisticPayload.json")),
    ) else {
        println!("NOTE: skipping, the realistic workload is not in {dir}");
        return;
    };
    let drg = parse_dmn("determineFraudRatingConfidence.dmn", &xml).unwrap();
    assert_eq!(drg.id, "Definitions_17ojz6y");
    let id = "determine-fraud-rating-1dmmwcu";
    let mut variables: Value = serde_json::from_slice(&payload).unwrap();
    variables["customer_claim_frequency"] = json!(3);
    variables["vendor_claim_frequency"] = json!(12);
    let e = eval(&drg, id, variables.clone());
    assert_eq!(
        ok(&e),
        json!([
            {"fraud_rating_score": -3, "fraud_rating_confidence_score": 10},
            {"fraud_rating_score": 3, "fraud_rating_confidence_score": -3},
            {"fraud_rating_score": 5, "fraud_rating_confidence_score": -3},
        ])
    );
    let d = &e.evaluated[0];
    let amount = &variables["disputeDetails"]["disputeAmount"]["amount"];
    assert_eq!(
        inputs(d),
        format!(
            "InputClause_1abpx7l(1-year customer claim frequency)=3;\
             InputClause_1yzzr92(1-year vendor claim frequency)=12;\
             InputClause_16ezqsg(dispute amount)={amount};"
        )
    );
    let matched: Vec<(&str, i32)> = d
        .matched_rules
        .iter()
        .map(|r| (r.id.as_str(), r.index))
        .collect();
    assert_eq!(
        matched,
        [
            ("DecisionRule_1k4nzuh", 1),
            ("DecisionRule_0a70ym2", 4),
            ("DecisionRule_0t3no5s", 7)
        ]
    );
    assert_eq!(d.matched_rules[0].outputs[0].name, "fraud rating score");

    // Without the frequencies: null inputs match only `-` entries.
    variables["customer_claim_frequency"] = Value::Null;
    variables
        .as_object_mut()
        .unwrap()
        .remove("vendor_claim_frequency");
    let e = eval(&drg, id, variables);
    assert_eq!(
        ok(&e),
        json!([{"fraud_rating_score": 5, "fraud_rating_confidence_score": -3}])
    );
}

// ---------------------------------------------------------------------------------------------
// Hit policies and values

#[test]
fn unique_and_any() {
    let xml = table(
        "hitPolicy=\"UNIQUE\"",
        &["x"],
        &["out"],
        &[(&["&lt; 5"], &["\"small\""]), (&["> 3"], &["\"big\""])],
    );
    let drg = parse_ok(&xml);
    assert_eq!(ok(&eval(&drg, "d", json!({"x": 1}))), json!("small"));
    assert_eq!(ok(&eval(&drg, "d", json!({"x": 9}))), json!("big"));
    assert_eq!(ok(&eval(&drg, "d", json!({}))), json!(null));
    let e = eval(&drg, "d", json!({"x": 4}));
    assert_eq!(
        e.result.unwrap_err().message,
        r##"Expected to evaluate decision 'd', but multiple values aren't allowed for UNIQUE hit policy. found: 'List(Map(out -> "small"), Map(out -> "big"))'"##
    );

    // ANY: equal results are fine, different ones are a failure listing the distinct ones.
    let xml = table(
        "hitPolicy=\"ANY\"",
        &["x"],
        &["a", "b"],
        &[
            (&["&lt; 5"], &["1", "\"x\""]),
            (&["&lt; 3"], &["1", "\"x\""]),
            (&["&lt; 2"], &["2", "null"]),
        ],
    );
    let drg = parse_ok(&xml);
    let e = eval(&drg, "d", json!({"x": 4}));
    assert_eq!(ok(&e), json!({"a": 1, "b": "x"}));
    let e = eval(&drg, "d", json!({"x": 2}));
    assert_eq!(ok(&e), json!({"a": 1, "b": "x"}));
    assert_eq!(e.evaluated[0].matched_rules.len(), 2);
    let e = eval(&drg, "d", json!({"x": 1}));
    assert_eq!(e.evaluated[0].matched_rules.len(), 3);
    assert_eq!(
        e.result.unwrap_err().message,
        r##"Expected to evaluate decision 'd', but different values aren't allowed for ANY hit policy. found: 'List(Map(a -> 1, b -> "x"), Map(a -> 2, b -> null))'"##
    );
}

#[test]
fn first_rule_order_and_collect() {
    let rules: &[(&[&str], &[&str])] = &[
        (&["> 10"], &["\"a\""]),
        (&["-"], &["\"b\""]),
        (&["> 100"], &["\"c\""]),
    ];
    let first = parse_ok(&table("hitPolicy=\"FIRST\"", &["x"], &["o"], rules));
    let e = eval(&first, "d", json!({"x": 500}));
    assert_eq!(ok(&e), json!("a"));
    assert_eq!(rules_of(&e), ["r0#1"]);
    let e = eval(&first, "d", json!({"x": 5}));
    assert_eq!(ok(&e), json!("b"));
    assert_eq!(rules_of(&e), ["r1#2"]);

    let rule_order = parse_ok(&table("hitPolicy=\"RULE ORDER\"", &["x"], &["o"], rules));
    let e = eval(&rule_order, "d", json!({"x": 500}));
    assert_eq!(ok(&e), json!(["a", "b", "c"]));
    assert_eq!(rules_of(&e), ["r0#1", "r1#2", "r2#3"]);

    let collect = parse_ok(&table("hitPolicy=\"COLLECT\"", &["x"], &["o"], rules));
    assert_eq!(
        ok(&eval(&collect, "d", json!({"x": 50}))),
        json!(["a", "b"])
    );

    // Nothing matches: an empty list for the list policies, 0 for COUNT, null otherwise.
    let none: &[(&[&str], &[&str])] = &[(&["> 10"], &["1"])];
    for (policy, expected) in [
        ("hitPolicy=\"COLLECT\"", json!([])),
        ("hitPolicy=\"RULE ORDER\"", json!([])),
        ("hitPolicy=\"OUTPUT ORDER\"", json!([])),
        ("hitPolicy=\"COLLECT\" aggregation=\"COUNT\"", json!(0)),
        ("hitPolicy=\"COLLECT\" aggregation=\"SUM\"", json!(null)),
        ("hitPolicy=\"COLLECT\" aggregation=\"MIN\"", json!(null)),
        ("hitPolicy=\"COLLECT\" aggregation=\"MAX\"", json!(null)),
        ("hitPolicy=\"UNIQUE\"", json!(null)),
        ("", json!(null)),
        ("hitPolicy=\"FIRST\"", json!(null)),
        ("hitPolicy=\"ANY\"", json!(null)),
        ("hitPolicy=\"PRIORITY\"", json!(null)),
    ] {
        let drg = parse_ok(&table(policy, &["x"], &["o"], none));
        assert_eq!(ok(&eval(&drg, "d", json!({"x": 1}))), expected, "{policy}");
    }
}

fn rules_of(e: &Evaluation) -> Vec<String> {
    let last = e.evaluated.last().unwrap();
    last.matched_rules
        .iter()
        .map(|r| format!("{}#{}", r.id, r.index))
        .collect()
}

#[test]
fn collect_aggregations() {
    let rules: &[(&[&str], &[&str])] = &[
        (&["> 1"], &["0.1"]),
        (&["> 2"], &["0.2"]),
        (&["> 3"], &["x * 2"]),
    ];
    for (aggregation, expected) in [
        ("SUM", json!(8.3)),
        ("MIN", json!(0.1)),
        ("MAX", json!(8)),
        ("COUNT", json!(3)),
    ] {
        let drg = parse_ok(&table(
            &format!("hitPolicy=\"COLLECT\" aggregation=\"{aggregation}\""),
            &["x"],
            &["o"],
            rules,
        ));
        let e = eval(&drg, "d", json!({"x": 4}));
        assert_eq!(ok(&e), expected, "{aggregation}");
        assert_eq!(e.evaluated[0].matched_rules.len(), 3);
    }
    // Decimal arithmetic: 0.1 + 0.2 is 0.3.
    let drg = parse_ok(&table(
        "hitPolicy=\"COLLECT\" aggregation=\"SUM\"",
        &["x"],
        &["o"],
        rules,
    ));
    assert_eq!(ok(&eval(&drg, "d", json!({"x": 3}))), json!(0.3));
    // A non-number cannot be summed.
    let drg = parse_ok(&table(
        "hitPolicy=\"COLLECT\" aggregation=\"SUM\"",
        &["x"],
        &["o"],
        &[(&["-"], &["1"]), (&["-"], &["\"two\""])],
    ));
    let e = eval(&drg, "d", json!({}));
    assert_eq!(
        e.result.unwrap_err().message,
        r##"Expected to evaluate decision 'd', but expected number but found '"two"'"##
    );
}

#[test]
fn priority_and_output_order() {
    let xml = dmn(
        r##"<decision id="d" name="D"><decisionTable id="t" hitPolicy="PRIORITY">
        <input id="i"><inputExpression><text>x</text></inputExpression></input>
        <output id="o" name="level"><outputValues><text>"high","medium","low"</text></outputValues></output>
        <rule id="r1"><inputEntry><text>&gt; 1</text></inputEntry><outputEntry><text>"low"</text></outputEntry></rule>
        <rule id="r2"><inputEntry><text>&gt; 2</text></inputEntry><outputEntry><text>"high"</text></outputEntry></rule>
        <rule id="r3"><inputEntry><text>&gt; 3</text></inputEntry><outputEntry><text>"medium"</text></outputEntry></rule>
        <rule id="r4"><inputEntry><text>&gt; 4</text></inputEntry><outputEntry><text>"unknown"</text></outputEntry></rule>
        </decisionTable></decision>"##,
    );
    let drg = parse_ok(&xml);
    let DecisionLogic::Table(t) = &drg.decisions[0].logic else {
        panic!()
    };
    assert_eq!(
        t.outputs[0].priorities,
        [json!("high"), json!("medium"), json!("low")]
    );
    assert_eq!(ok(&eval(&drg, "d", json!({"x": 2}))), json!("low"));
    let e = eval(&drg, "d", json!({"x": 4}));
    assert_eq!(ok(&e), json!("high"));
    // dmn-scala reports every matched rule for PRIORITY.
    assert_eq!(rules_of(&e), ["r1#1", "r2#2", "r3#3"]);
    assert_eq!(ok(&eval(&drg, "d", json!({"x": 0}))), json!(null));

    let drg = parse_ok(&xml.replace("PRIORITY", "OUTPUT ORDER"));
    assert_eq!(
        ok(&eval(&drg, "d", json!({"x": 9}))),
        json!(["high", "medium", "low", "unknown"])
    );
    // Numeric output values.
    let xml = dmn(
        r##"<decision id="d" name="D"><decisionTable id="t" hitPolicy="OUTPUT ORDER">
        <input id="i"><inputExpression><text>x</text></inputExpression></input>
        <output id="o" name="n"><outputValues><text>3, 1, 2</text></outputValues></output>
        <rule id="r1"><inputEntry><text>-</text></inputEntry><outputEntry><text>1</text></outputEntry></rule>
        <rule id="r2"><inputEntry><text>-</text></inputEntry><outputEntry><text>2</text></outputEntry></rule>
        <rule id="r3"><inputEntry><text>-</text></inputEntry><outputEntry><text>3</text></outputEntry></rule>
        </decisionTable></decision>"##,
    );
    let drg = parse_ok(&xml);
    assert_eq!(ok(&eval(&drg, "d", json!({}))), json!([3, 1, 2]));
}

#[test]
fn numbers_are_decimals() {
    let drg = parse_ok(&dmn(
        r##"<decision id="d" name="D"><literalExpression><text>x * (1 - 0.2)</text></literalExpression></decision>"##,
    ));
    let e = eval(&drg, "d", json!({"x": 150}));
    assert_eq!(serde_json::to_string(&ok(&e)).unwrap(), "120");
    assert_eq!(ok(&eval(&drg, "d", json!({"x": 0.5}))), json!(0.4));
    // A missing variable is null, not a failure.
    assert_eq!(ok(&eval(&drg, "d", json!({}))), json!(null));
}

#[test]
fn literal_expression_results_and_context() {
    let drg = parse_ok(&dmn(
        r##"<decision id="d" name="D"><literalExpression><text>{total: sum(items), n: count(items)}</text></literalExpression></decision>"##,
    ));
    let e = eval(&drg, "d", json!({"items": [1, 2, 3]}));
    assert_eq!(ok(&e), json!({"total": 6, "n": 3}));
    assert_eq!(e.evaluated[0].decision_type, "LITERAL_EXPRESSION");
}

#[test]
fn input_entries_with_variables_question_mark_and_negation() {
    let xml = table(
        "hitPolicy=\"COLLECT\"",
        &["customer.age", "customer.tier"],
        &["o"],
        &[
            (&["&gt;= limit", "-"], &["\"adult\""]),
            (&["? &lt; 18", ""], &["\"minor\""]),
            (&["-", "not(\"gold\", \"silver\")"], &["\"regular\""]),
            (&["[18..65]", "\"gold\",\"silver\""], &["\"member\""]),
            (&["-", "null"], &["\"no tier\""]),
        ],
    );
    let drg = parse_ok(&xml);
    let e = eval(
        &drg,
        "d",
        json!({"limit": 18, "customer": {"age": 30, "tier": "gold"}}),
    );
    assert_eq!(ok(&e), json!(["adult", "member"]));
    assert_eq!(
        inputs(&e.evaluated[0]),
        r##"i0(customer.age)=30;i1(customer.tier)="gold";"##
    );
    let e = eval(
        &drg,
        "d",
        json!({"limit": 18, "customer": {"age": 12, "tier": "bronze"}}),
    );
    assert_eq!(ok(&e), json!(["minor", "regular"]));
    // Missing inputs are null: comparisons do not match, `not("gold", ...)` and `null` do.
    let e = eval(&drg, "d", json!({}));
    assert_eq!(ok(&e), json!(["regular", "no tier"]));
    assert_eq!(
        inputs(&e.evaluated[0]),
        "i0(customer.age)=null;i1(customer.tier)=null;"
    );
}

#[test]
fn required_decisions_are_evaluated_once_depth_first() {
    // top requires left and right; both require base; right also requires left.
    let xml = dmn(r##"
<decision id="top" name="Top">
  <informationRequirement><requiredDecision href="#left" /></informationRequirement>
  <informationRequirement><requiredDecision href="#right" /></informationRequirement>
  <informationRequirement><requiredInput href="#input" /></informationRequirement>
  <literalExpression><text>[left, right_value, x]</text></literalExpression>
</decision>
<decision id="right" name="Right">
  <variable name="right_value" />
  <informationRequirement><requiredDecision href="#base" /></informationRequirement>
  <informationRequirement><requiredDecision href="#left" /></informationRequirement>
  <literalExpression><text>base + left</text></literalExpression>
</decision>
<decision id="left" name="Left">
  <informationRequirement><requiredDecision href="#base" /></informationRequirement>
  <literalExpression><text>base * 10</text></literalExpression>
</decision>
<decision id="base" name="Base"><literalExpression><text>x + 1</text></literalExpression></decision>
<inputData id="input" name="x" />
"##);
    let drg = parse_ok(&xml);
    assert_eq!(drg.decision("right").unwrap().result_name, "right_value");
    let e = eval(&drg, "top", json!({"x": 1}));
    assert_eq!(ok(&e), json!([20, 22, 1]));
    let order: Vec<&str> = e.evaluated.iter().map(|d| d.decision_id.as_str()).collect();
    assert_eq!(order, ["base", "left", "right", "top"]);
    let outputs: Vec<&Value> = e.evaluated.iter().map(|d| &d.output).collect();
    assert_eq!(
        outputs,
        [&json!(2), &json!(20), &json!(22), &json!([20, 22, 1])]
    );
    // A required decision's result is not visible to the decisions that do not require it, and
    // only the requested decision's requirements are evaluated.
    let e = eval(&drg, "left", json!({"x": 1}));
    assert_eq!(e.evaluated.len(), 2);
    assert_eq!(ok(&e), json!(20));
}

#[test]
fn failures_stop_the_evaluation() {
    let xml = dmn(r##"
<decision id="top" name="Top">
  <informationRequirement><requiredDecision href="#tier" /></informationRequirement>
  <informationRequirement><requiredDecision href="#other" /></informationRequirement>
  <literalExpression><text>tier</text></literalExpression>
</decision>
<decision id="other" name="Other"><literalExpression><text>1</text></literalExpression></decision>
<decision id="tier" name="Tier">
  <decisionTable>
    <input id="in" label="Amount"><inputExpression><text>amount</text></inputExpression></input>
    <output id="out" name="tier" />
    <rule id="a"><inputEntry><text>&gt; 1</text></inputEntry><outputEntry><text>1</text></outputEntry></rule>
    <rule id="b"><inputEntry><text>&gt; 2</text></inputEntry><outputEntry><text>2</text></outputEntry></rule>
  </decisionTable>
</decision>
<decision id="bad_output" name="Bad output">
  <decisionTable>
    <input id="in2"><inputExpression><text>amount</text></inputExpression></input>
    <output id="out2" name="f" />
    <rule id="c"><inputEntry><text>-</text></inputEntry><outputEntry><text>function(a) a</text></outputEntry></rule>
  </decisionTable>
</decision>
"##);
    let drg = parse_ok(&xml);
    let e = eval(&drg, "top", json!({"amount": 5}));
    let failure = e.result.as_ref().unwrap_err();
    assert_eq!(failure.decision_id, "tier");
    assert_eq!(
        failure.message,
        "Expected to evaluate decision 'top', but multiple values aren't allowed for UNIQUE hit \
         policy. found: 'List(Map(tier -> 1), Map(tier -> 2))'"
    );
    let order: Vec<&str> = e.evaluated.iter().map(|d| d.decision_id.as_str()).collect();
    assert_eq!(order, ["tier"]);
    assert_eq!(e.evaluated[0].output, json!(null));
    assert_eq!(rules_of(&e), ["a#1", "b#2"]);
    assert_eq!(ok(&eval(&drg, "top", json!({"amount": 2}))), json!(1));

    // An output entry that cannot be evaluated: the decision fails (no matched rules reported,
    // as in dmn-scala), with the FEEL error.
    let e = eval(&drg, "bad_output", json!({"amount": 2}));
    let failure = e.result.as_ref().unwrap_err();
    assert_eq!(failure.decision_id, "bad_output");
    assert!(
        failure
            .message
            .starts_with("Expected to evaluate decision 'bad_output', but failed to evaluate expression 'function(a) a'"),
        "{}",
        failure.message
    );
    assert_eq!(inputs(&e.evaluated[0]), "in2(amount)=2;");
    assert!(e.evaluated[0].matched_rules.is_empty());
}

#[test]
fn other_dmn_versions_and_prefixes() {
    for ns in [
        "http://www.omg.org/spec/DMN/20151101/dmn.xsd",
        "http://www.omg.org/spec/DMN/20180521/MODEL/",
        "https://www.omg.org/spec/DMN/20211108/MODEL/",
        "https://www.omg.org/spec/DMN/20230324/MODEL/",
    ] {
        let xml = format!(
            r##"<dmn:definitions xmlns:dmn="{ns}" xmlns:other="urn:x" id="defs" name="Defs" namespace="n">
  <dmn:decision id="d" name="D">
    <dmn:extensionElements><other:decisionTable /></dmn:extensionElements>
    <dmn:literalExpression expressionLanguage="https://www.omg.org/spec/DMN/20191111/FEEL/"><dmn:text><![CDATA[a < b]]></dmn:text></dmn:literalExpression>
  </dmn:decision>
  <dmn:businessKnowledgeModel id="unused" name="Unused" />
  <other:decision id="ignored" />
</dmn:definitions>"##
        );
        let drg = parse_ok(&xml);
        assert_eq!(drg.decisions.len(), 1, "{ns}");
        assert_eq!(ok(&eval(&drg, "d", json!({"a": 1, "b": 2}))), json!(true));
    }
}

// ---------------------------------------------------------------------------------------------
// Deploy-time problems

#[test]
fn not_a_dmn_resource() {
    parse_err("<definitions id=\"x\" />")
        .has("the root element must be 'definitions' in a DMN namespace");
    parse_err(r##"<process xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" />"##)
        .has("but is 'process' in namespace");
    parse_err("<definitions").has("XML is not well-formed");
    parse_err("").has("XML is not well-formed");
    let e = parse_dmn("bad.dmn", b"<definitions>\xff</definitions>").unwrap_err();
    assert!(e.to_string().contains("not valid UTF-8"), "{e}");
    assert_eq!(e.resource_name, "bad.dmn");
    parse_err(&dmn("")).has("contains no decision");
    parse_err(&dmn("<inputData id=\"i\" name=\"x\"/>")).has("contains no decision");
    parse_err(
        r##"<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" name="n"><decision id="d"><literalExpression><text>1</text></literalExpression></decision></definitions>"##,
    )
    .has("'definitions' element has no id");
}

#[test]
fn decision_problems_are_all_reported_with_lines() {
    let xml = dmn(
        r##"<decision name="No id"><literalExpression><text>1</text></literalExpression></decision>
<decision id="no_logic" name="No logic" />
<decision id="ctx" name="Context"><context /></decision>
<decision id="inv" name="Invocation"><invocation /></decision>
<decision id="rel" name="Relation"><relation /></decision>
<decision id="bkm_user" name="Uses BKM">
  <knowledgeRequirement><requiredKnowledge href="#bkm" /></knowledgeRequirement>
  <literalExpression><text>bkm(1)</text></literalExpression>
</decision>
<decision id="dup" name="A"><literalExpression><text>1</text></literalExpression></decision>
<decision id="dup" name="B"><literalExpression><text>2</text></literalExpression></decision>
<decision id="bad_feel" name="Bad FEEL"><literalExpression><text>1 +</text></literalExpression></decision>
<decision id="empty" name="Empty"><literalExpression><text>  </text></literalExpression></decision>
<decision id="js" name="JS"><literalExpression expressionLanguage="javascript"><text>1</text></literalExpression></decision>
<decision id="needs_ghost" name="Ghost"><informationRequirement><requiredDecision href="#ghost" /></informationRequirement><literalExpression><text>ghost</text></literalExpression></decision>
<decision id="imported" name="Imported"><informationRequirement><requiredDecision href="other.dmn#x" /></informationRequirement><literalExpression><text>1</text></literalExpression></decision>
<businessKnowledgeModel id="bkm" name="bkm" />"##,
    );
    let e = parse_err(&xml);
    e.has("- line 3, column 1: a decision has no id (decision named 'No id')")
        .has("- Element: no_logic (line 4): decision 'no_logic' has no decision logic")
        .has("- Element: inv (line 6): an invocation of 'inv' names no function (a literal expression)")
        .has("- Element: dup (line 13): duplicate decision id 'dup' (also used by the decision on line 12)")
        .has("- Element: bad_feel (line 14): the literal expression of decision 'bad_feel' is not valid FEEL: failed to parse expression '1 +'")
        .has("the literal expression of decision 'empty' is empty")
        .has("the literal expression of decision 'js' uses the expression language 'javascript', which is not supported")
        .has("- Element: needs_ghost (line 17): decision 'needs_ghost' requires the decision 'ghost', which does not exist in this resource")
        .has("decision 'imported' requires the decision 'other.dmn#x' of another model");
    // an empty context and relation are values; a model may use a business knowledge model
    assert_eq!(e.1, 9, "{}", e.0);
    assert!(
        e.0.starts_with("'test.dmn': 9 problem(s) found:"),
        "{}",
        e.0
    );
}

#[test]
fn cycles_are_rejected() {
    let xml = dmn(
        r##"<decision id="a" name="A"><informationRequirement><requiredDecision href="#b" /></informationRequirement><literalExpression><text>b</text></literalExpression></decision>
<decision id="b" name="B"><informationRequirement><requiredDecision href="#c" /></informationRequirement><literalExpression><text>c</text></literalExpression></decision>
<decision id="c" name="C"><informationRequirement><requiredDecision href="#a" /></informationRequirement><literalExpression><text>a</text></literalExpression></decision>
<decision id="self" name="Self"><informationRequirement><requiredDecision href="#self" /></informationRequirement><literalExpression><text>1</text></literalExpression></decision>"##,
    );
    parse_err(&xml)
        .has("the required decisions form a cycle: 'a' -> 'b' -> 'c' -> 'a'")
        .has("the required decisions form a cycle: 'self' -> 'self'");

    // A long chain is fine (and does not overflow the stack).
    let mut body = String::new();
    for i in 0..3000 {
        body += &format!(
            r##"<decision id="d{i}" name="D"><informationRequirement><requiredDecision href="#d{}" /></informationRequirement><literalExpression><text>d{} + 1</text></literalExpression></decision>"##,
            i + 1,
            i + 1
        );
    }
    body += r##"<decision id="d3000" name="D"><literalExpression><text>0</text></literalExpression></decision>"##;
    let drg = parse_ok(&dmn(&body));
    let e = eval(&drg, "d0", json!({}));
    assert_eq!(ok(&e), json!(3000));
    assert_eq!(e.evaluated.len(), 3001);
}

#[test]
fn table_problems() {
    let xml = dmn(r##"<decision id="t" name="T">
<decisionTable hitPolicy="SOMETIMES" aggregation="AVERAGE">
  <input id="i1"><inputExpression><text>a +</text></inputExpression></input>
  <input id="i2" />
  <output id="o1" label="First" />
  <output id="o2" name="second" />
  <rule id="r1">
    <inputEntry><text>&lt;</text></inputEntry>
    <outputEntry><text>1</text></outputEntry>
  </rule>
  <rule id="r2">
    <inputEntry><text>1</text></inputEntry><inputEntry><text>[1..</text></inputEntry>
    <outputEntry><text>)</text></outputEntry><outputEntry><text>2</text></outputEntry>
  </rule>
</decisionTable></decision>
<decision id="agg" name="Agg"><decisionTable hitPolicy="FIRST" aggregation="SUM"><output id="o" name="o" /></decisionTable></decision>
<decision id="agg2" name="Agg2"><decisionTable hitPolicy="COLLECT" aggregation="MAX"><output id="x" name="x" /><output id="y" name="y" /></decisionTable></decision>
<decision id="no_out" name="No output"><decisionTable /></decision>"##);
    let e = parse_err(&xml);
    e.has("the decision table of decision 't' has the unknown hit policy 'SOMETIMES'")
        .has("the decision table of decision 't' has the unknown aggregation 'AVERAGE'")
        .has("- Element: t (line 5): the input expression of input 'i1' of decision 't' is not valid FEEL: failed to parse expression 'a +'")
        .has("- Element: t (line 6): the input 'i2' of decision 't' has no input expression")
        .has("- Element: t (line 7): the output 'o1' (label 'First') of decision 't' has no name")
        .has("- Element: t (line 9): rule 'r1' of decision 't' has 1 input entries, but the table has 2 inputs")
        .has("rule 'r1' of decision 't' has 1 output entries, but the table has 2 outputs")
        .has("input entry 1 of rule 'r1' of decision 't' is not valid FEEL: failed to parse unary tests '<'")
        .has("input entry 2 of rule 'r2' of decision 't' is not valid FEEL: failed to parse unary tests '[1..'")
        .has("output entry 1 of rule 'r2' of decision 't' is not valid FEEL: failed to parse expression ')'")
        .has("the decision table of decision 'agg' has the aggregation 'SUM', which is only allowed with the hit policy COLLECT")
        .has("the decision table of decision 'agg2' has 2 outputs: the hit policy COLLECT with an aggregation needs exactly one output")
        .has("the decision table of decision 'no_out' has no output");
}

#[test]
fn empty_entries_and_tables_without_inputs() {
    let xml = dmn(
        r##"<decision id="d" name="D"><decisionTable hitPolicy="RULE ORDER">
  <output id="o" name="o" />
  <rule id="r1"><outputEntry><text></text></outputEntry></rule>
  <rule id="r2"><outputEntry><text>"x"</text></outputEntry></rule>
  <rule id="r3"><outputEntry /></rule>
</decisionTable></decision>"##,
    );
    let drg = parse_ok(&xml);
    let e = eval(&drg, "d", json!({}));
    assert_eq!(ok(&e), json!([null, "x", null]));
    assert!(e.evaluated[0].inputs.is_empty());
    // Outputs without a label are reported by name; one output may have no name.
    let xml = table("", &["x"], &[""], &[(&["-"], &["1"])]);
    let drg = parse_ok(&xml);
    let e = eval(&drg, "d", json!({}));
    assert_eq!(ok(&e), json!(1));
    assert_eq!(e.evaluated[0].matched_rules[0].outputs[0].name, "");
}

// ---------------------------------------------------------------------------------------------
// Robustness

/// Pieces that mangled resources are made of.
const PIECES: &[&str] = &[
    "<decision id=\"d\" name=\"D\">",
    "<decision id=\"e\">",
    "<decision>",
    "</decision>",
    "<decisionTable hitPolicy=\"COLLECT\" aggregation=\"SUM\">",
    "<decisionTable hitPolicy=\"PRIORITY\">",
    "<decisionTable>",
    "</decisionTable>",
    "<input id=\"i\"><inputExpression><text>x</text></inputExpression></input>",
    "<input label=\"l\"><inputExpression><text>(</text></inputExpression></input>",
    "<output id=\"o\" name=\"o\"><outputValues><text>\"a\",\"b\"</text></outputValues></output>",
    "<output id=\"p\" />",
    "<rule id=\"r\">",
    "</rule>",
    "<inputEntry><text>&lt; 5</text></inputEntry>",
    "<inputEntry><text>not(</text></inputEntry>",
    "<inputEntry><text>? &gt; x</text></inputEntry>",
    "<outputEntry><text>x + 1</text></outputEntry>",
    "<outputEntry><text>\"a\"</text></outputEntry>",
    "<outputEntry />",
    "<literalExpression><text>x * 2</text></literalExpression>",
    "<literalExpression><text>[</text></literalExpression>",
    "<informationRequirement><requiredDecision href=\"#d\" /></informationRequirement>",
    "<informationRequirement><requiredDecision href=\"#e\" /></informationRequirement>",
    "<informationRequirement><requiredDecision /></informationRequirement>",
    "<variable name=\"v\" />",
    "<context />",
    "text",
    "<",
    "&amp;",
    "<![CDATA[ x ]]>",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Arbitrary sequences of DMN pieces: the parser returns a graph or problems, never panics,
    /// and whatever parses can be evaluated for each of its decisions.
    #[test]
    fn parse_dmn_never_panics_on_mangled_resources(
        pieces in proptest::collection::vec(0..PIECES.len(), 0..40),
        cut in any::<prop::sample::Index>(),
        x in prop_oneof![Just(json!(null)), Just(json!(3)), Just(json!("a"))],
    ) {
        let body: String = pieces.iter().map(|&i| PIECES[i]).collect();
        let xml = dmn(&body);
        if let Ok(drg) = parse_dmn("fuzz.dmn", xml.as_bytes()) {
            for decision in &drg.decisions {
                let e = drg.evaluate(&decision.id, &vars(json!({"x": x.clone()}))).unwrap();
                prop_assert_eq!(&e.evaluated.last().unwrap().decision_id, &decision.id);
            }
        }
        // Truncated anywhere (on a character boundary or not).
        let bytes = xml.as_bytes();
        let end = cut.index(bytes.len() + 1);
        let _ = parse_dmn("fuzz.dmn", &bytes[..end]);
    }

    /// Arbitrary bytes.
    #[test]
    fn parse_dmn_never_panics_on_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = parse_dmn("random.dmn", &bytes);
        let mut xml = HEAD.as_bytes().to_vec();
        xml.extend_from_slice(&bytes);
        xml.extend_from_slice(TAIL.as_bytes());
        let _ = parse_dmn("random.dmn", &xml);
    }
}

/// Every byte of the anchor models flipped or removed, one at a time (deterministic).
#[test]
fn parse_dmn_never_panics_on_mutated_anchor_models() {
    for name in ["decisions.dmn", "decisions_late.dmn"] {
        let xml = anchor(name);
        for i in (0..xml.len()).step_by(7) {
            let mut removed = xml.clone();
            removed.remove(i);
            if let Ok(drg) = parse_dmn(name, &removed) {
                for d in &drg.decisions {
                    let _ = drg.evaluate(&d.id, &vars(json!({"amount": 150, "customer": "gold"})));
                }
            }
            let mut flipped = xml.clone();
            flipped[i] ^= 0x20;
            let _ = parse_dmn(name, &flipped);
        }
    }
}

/// A date stays a date from a decision to the decisions requiring it, from a context entry to
/// the next, into a business knowledge model and into a table's input, as in dmn-scala (as
/// JSON it would be a string, and `.year` or `<` on it null).
#[test]
fn values_keep_their_feel_types_inside_the_model() {
    let drg = parse_ok(&dmn(r##"
<businessKnowledgeModel id="next_month" name="next month">
  <encapsulatedLogic>
    <formalParameter name="d" />
    <literalExpression><text>d + duration("P1M")</text></literalExpression>
  </encapsulatedLogic>
</businessKnowledgeModel>
<decision id="start" name="Start">
  <literalExpression><text>date(startText)</text></literalExpression>
</decision>
<decision id="plan" name="Plan">
  <informationRequirement><requiredDecision href="#start" /></informationRequirement>
  <knowledgeRequirement><requiredKnowledge href="#next_month" /></knowledgeRequirement>
  <context>
    <contextEntry><variable name="due" /><literalExpression><text>next month(start)</text></literalExpression></contextEntry>
    <contextEntry><variable name="dueMonth" /><literalExpression><text>due.month</text></literalExpression></contextEntry>
    <contextEntry><variable name="startYear" /><literalExpression><text>start.year</text></literalExpression></contextEntry>
  </context>
</decision>
<decision id="late" name="Late">
  <informationRequirement><requiredDecision href="#start" /></informationRequirement>
  <decisionTable id="t" hitPolicy="FIRST">
    <input id="i"><inputExpression><text>start</text></inputExpression></input>
    <output id="o" name="late" />
    <rule id="r1"><inputEntry><text>&lt; date("2020-01-01")</text></inputEntry><outputEntry><text>true</text></outputEntry></rule>
    <rule id="r2"><inputEntry><text>-</text></inputEntry><outputEntry><text>false</text></outputEntry></rule>
  </decisionTable>
</decision>
"##));
    let e = eval(&drg, "plan", json!({"startText": "2019-12-15"}));
    assert_eq!(
        ok(&e),
        json!({"due": "2020-01-15", "dueMonth": 1, "startYear": 2019})
    );
    let ids: Vec<&str> = e.evaluated.iter().map(|d| d.decision_id.as_str()).collect();
    assert_eq!(ids, ["start", "next_month", "plan"]);
    let e = eval(&drg, "late", json!({"startText": "2019-12-15"}));
    assert_eq!(ok(&e), json!(true));
    assert_eq!(e.evaluated[1].inputs[0].value, json!("2019-12-15"));
}

/// What evaluating a decision reads of its variables, for a business rule task that collects
/// only those: the variables parsed into the parts read give the same evaluation as the whole
/// documents, and leave out what no expression names.
#[test]
fn a_decision_reads_only_the_parts_of_variables_it_names() {
    let xml = table(
        r#"hitPolicy="COLLECT""#,
        &["order.amount", "customer.tier"],
        &["out"],
        &[
            (&["> limit.max", "-"], &["order.id"]),
            (&["-", "\"gold\""], &["bonus + order.amount"]),
            (&["&lt; 0", "-"], &["\"never\""]),
        ],
    );
    let drg = parse_ok(&xml);
    let whole = json!({
        "order": {"amount": 10, "id": "o-1", "items": [1, 2, 3]},
        "customer": {"tier": "gold", "name": "x"},
        "limit": {"max": 5, "min": 1},
        "bonus": 3,
        "other": {"big": "y"}
    });
    let reads = drg.variable_reads("d").unwrap();
    let parted: Variables = reads
        .as_slice()
        .iter()
        .filter_map(|(name, parts)| {
            let text = whole.get(name)?.to_string();
            Some((name.clone(), parts.parse(&text).unwrap()))
        })
        .collect();
    assert_eq!(
        parted.get("order"),
        Some(&json!({"amount": 10, "id": "o-1"}))
    );
    assert_eq!(parted.get("customer"), Some(&json!({"tier": "gold"})));
    assert_eq!(parted.get("limit"), Some(&json!({"max": 5})));
    assert!(parted.get("other").is_none());
    let e = eval(&drg, "d", whole);
    assert_eq!(ok(&e), json!(["o-1", 13]));
    assert_eq!(drg.evaluate("d", &parted), Some(e));

    // required decisions' reads count too; boxed logic other than literals reads everything
    let xml = dmn(r##"
<decision id="top" name="Top">
  <informationRequirement><requiredDecision href="#base" /></informationRequirement>
  <literalExpression><text>base + a.b</text></literalExpression>
</decision>
<decision id="base" name="Base"><literalExpression><text>x.y + 1</text></literalExpression></decision>
"##);
    let drg = parse_ok(&xml);
    let reads = drg.variable_reads("top").unwrap();
    let names: Vec<&str> = reads.as_slice().iter().map(|(n, _)| n.as_str()).collect();
    // (the names FEEL sees include path keys, `b` and `y`: read if such variables exist)
    for name in ["a", "base", "x"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert!(drg.variable_reads("nope").is_none());
    let boxed = parse_dmn("decision_boxed.dmn", &anchor("decision_boxed.dmn")).unwrap();
    assert!(boxed.variable_reads("offer").is_none());
}
