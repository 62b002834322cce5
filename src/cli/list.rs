//! `fencekit list`: what is behind a device (systems of a Redfish service,
//! domains of a hypervisor, instances, plugs).

use super::args::{ActionArgs, Output};
use super::plan::begin;
use super::render::shorten;
use crate::engine::power::PowerState;
use crate::exit;

/// One thing behind a device, for `fencekit list`.
#[derive(serde::Serialize)]
struct Listed {
    target: String,
    name: String,
    uri: Option<String>,
    state: Option<PowerState>,
    error: Option<String>,
}

async fn list_one(
    p: &crate::fleet::plan::NodePlan,
    level: usize,
    step: std::time::Duration,
) -> Vec<Listed> {
    use crate::engine::driver::PowerDriver;
    let Some(m) = p.levels.get(level) else {
        return vec![];
    };
    let target = m.endpoint();
    let fail = |e: String| {
        vec![Listed {
            target: target.clone(),
            name: "-".into(),
            uri: None,
            state: None,
            error: Some(e),
        }]
    };
    let mut driver = match m.build(None).await {
        Ok(d) => d,
        Err(e) => return fail(e.to_string()),
    };
    let deadline = Some(std::time::Instant::now() + step);
    let out = match driver.inner_mut().list(deadline).await {
        Ok(rows) => rows
            .into_iter()
            .map(|r| Listed {
                target: r.target.unwrap_or_else(|| target.clone()),
                name: r.name,
                uri: r.uri,
                state: r.state,
                error: r.error,
            })
            .collect(),
        Err(e) => fail(e),
    };
    driver.close().await;
    out
}

/// Entry point of `fencekit list`.
pub fn main(a: ActionArgs) -> i32 {
    let plans = match begin(&a) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let Some(rt) = crate::runtime::runtime("fencekit") else {
        return exit::FAILURE;
    };
    let level = a.level.map_or(0, |l| l as usize - 1);
    let rows: Vec<Listed> = rt.block_on(async {
        let mut all = Vec::new();
        for p in &plans {
            all.extend(list_one(p, level, a.login_timeout).await);
        }
        all
    });
    match a.output {
        Output::Json | Output::Jsonl | Output::Openmetrics => {
            let doc = serde_json::json!({ "list": rows });
            crate::outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
        Output::Human => {
            let mut b = tabled::builder::Builder::default();
            b.push_record(["target", "name", "state", "path / error"]);
            for r in &rows {
                b.push_record([
                    r.target.clone(),
                    r.name.clone(),
                    r.state.map_or("-".into(), |s| s.to_string()),
                    shorten(
                        r.error
                            .clone()
                            .or_else(|| r.uri.clone())
                            .unwrap_or_default(),
                        100,
                    ),
                ]);
            }
            let mut t = b.build();
            t.with(tabled::settings::Style::sharp());
            crate::outln!("{t}");
        }
    }
    if rows.iter().any(|r| r.name == "-") {
        exit::FAILURE
    } else {
        exit::OK
    }
}
