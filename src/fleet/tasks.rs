//! Node tasks, joined so that nothing vanishes: a task that panicked (or
//! was cancelled) becomes a result of its own, with the panic's message,
//! in its place, and counts in the exit code like any failure. The fan-out
//! (`fanout::run_fleet`), `verify` (`verify::verify_all`) and `check`
//! (`verify::check_all`) join their node tasks through [`join_in_order`].

use tokio::task::{JoinError, JoinHandle};

/// What a task that did not finish left behind, in words: its panic's
/// message, or that it was cancelled.
pub fn lost(e: JoinError) -> String {
    if !e.is_panic() {
        return "its task was cancelled before it finished".into();
    }
    let payload = e.into_panic();
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into());
    format!("its task panicked: {message}")
}

/// Awaits every task in order. A task that did not finish is replaced by
/// `failed(key, why)` ([`lost`]'s words), so every key has its result.
pub async fn join_in_order<K, T>(
    tasks: Vec<(K, JoinHandle<T>)>,
    mut failed: impl FnMut(K, String) -> T,
) -> Vec<T> {
    let mut out = Vec::with_capacity(tasks.len());
    for (key, handle) in tasks {
        match handle.await {
            Ok(t) => out.push(t),
            Err(e) => {
                let why = lost(e);
                tracing::error!("a node task did not finish: {why}");
                out.push(failed(key, why));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicked_task_keeps_its_place_with_its_message() {
        let local = tokio::task::LocalSet::new();
        let out = local
            .run_until(async {
                let tasks: Vec<(&str, JoinHandle<String>)> = vec![
                    (
                        "a",
                        tokio::task::spawn_local(async { "a done".to_string() }),
                    ),
                    (
                        "b",
                        tokio::task::spawn_local(async {
                            if "b".len() == 1 {
                                panic!("node b: index 7 out of range");
                            }
                            String::new()
                        }),
                    ),
                    (
                        "c",
                        tokio::task::spawn_local(async {
                            let n = 3;
                            if n == 3 {
                                std::panic::panic_any(format!("node c: {n} levels"));
                            }
                            String::new()
                        }),
                    ),
                    (
                        "d",
                        tokio::task::spawn_local(async { "d done".to_string() }),
                    ),
                ];
                join_in_order(tasks, |k, why| format!("{k} failed: {why}")).await
            })
            .await;
        assert_eq!(
            out,
            [
                "a done",
                "b failed: its task panicked: node b: index 7 out of range",
                "c failed: its task panicked: node c: 3 levels",
                "d done",
            ]
        );
    }

    #[tokio::test]
    async fn a_cancelled_task_is_named_too() {
        let local = tokio::task::LocalSet::new();
        let out = local
            .run_until(async {
                let h = tokio::task::spawn_local(std::future::pending::<u8>());
                h.abort();
                join_in_order(vec![("x", h)], |_, why| {
                    assert_eq!(why, "its task was cancelled before it finished");
                    0
                })
                .await
            })
            .await;
        assert_eq!(out, [0]);
    }
}
