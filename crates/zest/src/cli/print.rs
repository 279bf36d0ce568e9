//! The CLI's inputs and outputs as zbctl has them: Go durations (`300ms`, `1m30s`), variables
//! as a JSON text or a JSON file, and responses printed as protojson (every field, 64-bit
//! integers as strings, two-space indent).

use std::sync::OnceLock;
use std::time::Duration;

use anyhow::Context;
use prost_reflect::{DescriptorPool, DynamicMessage, SerializeOptions};

/// A Go duration as zbctl takes them: a sequence of decimal numbers with units (`ns`, `us`,
/// `ms`, `s`, `m`, `h`), e.g. `300ms`, `50s`, `1m`, `1h30m`, `1.5s`; `0` alone is zero.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let s = text.trim();
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err("an empty duration: give e.g. 300ms, 50s or 1m".into());
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| format!("'{text}' has a number without a unit (e.g. 300ms, 50s, 1m)"))?;
        let number: f64 = rest[..num_len]
            .parse()
            .map_err(|_| format!("'{text}' is not a duration (e.g. 300ms, 50s, 1m)"))?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            unit => {
                return Err(format!(
                    "'{text}' has an unknown unit '{unit}' (ns, us, ms, s, m or h)"
                ))
            }
        };
        total += number * seconds;
        rest = &rest[unit_len..];
    }
    Ok(Duration::from_secs_f64(total))
}

/// Formats a duration as Go prints one (`5m0s`, `300ms`), for the human output lines.
pub fn go_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        return "0s".into();
    }
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let secs = d.as_secs_f64();
    let h = (secs / 3600.0).floor();
    let m = ((secs - h * 3600.0) / 60.0).floor();
    let s = secs - h * 3600.0 - m * 60.0;
    let s = if s.fract() == 0.0 {
        format!("{}s", s as u64)
    } else {
        format!("{}s", (s * 1000.0).round() / 1000.0)
    };
    match (h as u64, m as u64) {
        (0, 0) => s,
        (0, m) => format!("{m}m{s}"),
        (h, m) => format!("{h}h{m}m{s}"),
    }
}

/// Variables given on the command line: a JSON object, or the path of a file holding one
/// (`@path` or a plain path, as zbctl takes it).
pub fn variables(text: Option<&str>) -> anyhow::Result<String> {
    let Some(text) = text else {
        return Ok(String::new());
    };
    let trimmed = text.trim();
    let (doc, from) = if let Some(path) = trimmed.strip_prefix('@') {
        let doc = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
        (doc, format!("the file {path}"))
    } else if trimmed.starts_with('{') || trimmed.starts_with('[') || trimmed.is_empty() {
        (trimmed.to_string(), "--variables".to_string())
    } else if std::path::Path::new(trimmed).is_file() {
        let doc = std::fs::read_to_string(trimmed).with_context(|| format!("reading {trimmed}"))?;
        (doc, format!("the file {trimmed}"))
    } else {
        anyhow::bail!("--variables '{text}' is neither a JSON object nor the path of a JSON file");
    };
    if doc.trim().is_empty() {
        return Ok(String::new());
    }
    let value: serde_json::Value =
        serde_json::from_str(&doc).map_err(|e| anyhow::anyhow!("{from} is not valid JSON: {e}"))?;
    anyhow::ensure!(
        value.is_object(),
        "{from} must hold a JSON object, e.g. {{\"orderId\": 42}}"
    );
    Ok(doc)
}

fn pool() -> &'static DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| {
        DescriptorPool::decode(zest_gateway::FILE_DESCRIPTOR_SET)
            .expect("the gateway's descriptor set is built with the binary")
    })
}

/// A gateway message as protojson, as zbctl prints it: every field (defaults too), 64-bit
/// integers as strings, enums by name, two-space indent. `name` is the message's name in the
/// `gateway_protocol` package.
pub fn protojson(name: &str, message: &impl prost::Message) -> anyhow::Result<String> {
    let descriptor = pool()
        .get_message_by_name(&format!("gateway_protocol.{name}"))
        .with_context(|| format!("no message gateway_protocol.{name}"))?;
    let dynamic = DynamicMessage::decode(descriptor, message.encode_to_vec().as_slice())?;
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(
        &mut out,
        serde_json::ser::PrettyFormatter::with_indent(b"  "),
    );
    dynamic.serialize_with_options(
        &mut serializer,
        &SerializeOptions::new().skip_default_fields(false),
    )?;
    Ok(String::from_utf8(out)?)
}

/// Prints a gateway message as protojson on stdout.
pub fn print_json(name: &str, message: &impl prost::Message) -> anyhow::Result<()> {
    println!("{}", protojson(name, message)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use zest_gateway::proto;

    #[test]
    fn durations_parse_as_go_writes_them() {
        assert_eq!(parse_duration("300ms"), Ok(Duration::from_millis(300)));
        assert_eq!(parse_duration("50s"), Ok(Duration::from_secs(50)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert!(parse_duration("10").unwrap_err().contains("without a unit"));
        assert!(parse_duration("3d")
            .unwrap_err()
            .contains("unknown unit 'd'"));
        assert_eq!(go_duration(Duration::from_secs(300)), "5m0s");
        assert_eq!(go_duration(Duration::from_millis(300)), "300ms");
        assert_eq!(go_duration(Duration::ZERO), "0s");
    }

    #[test]
    fn responses_print_as_protojson_with_every_field() {
        let text = protojson(
            "CreateProcessInstanceResponse",
            &proto::CreateProcessInstanceResponse {
                process_definition_key: 2251799813685249,
                bpmn_process_id: "order".into(),
                version: 1,
                process_instance_key: 2251799813685251,
                tenant_id: String::new(),
                tags: vec![],
            },
        )
        .unwrap();
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["processDefinitionKey"], "2251799813685249");
        assert_eq!(doc["version"], 1);
        assert_eq!(doc["tenantId"], "", "default fields are printed too");
        assert!(text.contains("\n  \"bpmnProcessId\": \"order\""), "{text}");
    }

    #[test]
    fn variables_come_as_json_or_from_a_file() {
        assert_eq!(variables(None).unwrap(), "");
        assert_eq!(variables(Some("{\"a\":1}")).unwrap(), "{\"a\":1}");
        let err = variables(Some("[1]")).unwrap_err().to_string();
        assert!(err.contains("JSON object"), "{err}");
        let err = variables(Some("{\"a\":")).unwrap_err().to_string();
        assert!(err.contains("not valid JSON"), "{err}");
        let file = std::env::temp_dir().join(format!("zest-vars-{}.json", std::process::id()));
        std::fs::write(&file, "{\"b\": 2}").unwrap();
        let path = file.to_string_lossy().into_owned();
        assert_eq!(variables(Some(&path)).unwrap(), "{\"b\": 2}");
        assert_eq!(variables(Some(&format!("@{path}"))).unwrap(), "{\"b\": 2}");
        let _ = std::fs::remove_file(file);
        let err = variables(Some("no-such-file.json"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("neither a JSON object nor"), "{err}");
    }
}
