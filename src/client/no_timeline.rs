//! A step whose figures fit the budget but whose timeline is over the
//! core's limit for one (`overlap_core::MAX_TIMELINE_OPS`): the worker posts
//! its figures, then `{type: "no-timeline", gen, field, message}` in place
//! of the timeline, and the page says plainly why, naming the control and
//! the value that would draw it. The trace, Kineto and slide exports, which
//! need the timeline, say the same.

use overlap_core::FieldError;

/// The page's statement in place of the timeline, from the core's refusal
/// (`overlap_core::timeline_refusal`): one sentence, then where the figures
/// come from.
pub fn statement(refusal: &FieldError) -> String {
    format!(
        "{}. The figures above are this scenario's, extrapolated from its steady state; \
         `overlap-lab simulate scenario.json` prints them too.",
        sentence(&with_label(&refusal.message, &refusal.field))
    )
}

/// The message with the field's path as the page's control calls it:
/// "Global batch (workload.global_batch)".
fn with_label(message: &str, field: &str) -> String {
    match overlap_core::input::fields::FIELDS
        .iter()
        .find(|f| f.path == field)
    {
        Some(f) => message.replace(field, &format!("{} ({field})", f.label)),
        None => message.to_string(),
    }
}

/// What an export that needs the timeline says instead.
pub fn export_refusal(statement: &str, what: &str) -> String {
    format!("The {what} needs this step's timeline, which the page does not build. {statement}")
}

/// The message as a sentence: a capital first letter, no final stop.
fn sentence(message: &str) -> String {
    let trimmed = message.trim_end_matches('.');
    let mut chars = trimmed.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statement_names_the_control_and_the_value_that_draws_the_timeline() {
        let mut input = overlap_core::presets::find("megatron-1t").unwrap().input();
        input.workload.global_batch = Some(3072 * 20);
        input.overlap.tp = Some(true);
        let s = input.resolve().expect("its figures fit");
        let refusal = overlap_core::timeline_refusal(&s).expect("its timeline does not");
        let text = statement(&refusal);
        assert!(
            text.starts_with("This step's timeline would hold"),
            "{text}"
        );
        assert!(
            text.contains("lower Global batch (workload.global_batch) to 3174 to draw it"),
            "{text}"
        );
        assert!(text.contains("overlap-lab simulate"), "{text}");
        assert!(export_refusal(&text, "trace").contains(&text));
    }
}
