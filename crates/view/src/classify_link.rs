//! The measured view's classification rules as a link carries them
//! (`classify=`): checked as `overlap-lab import --classify-file` checks
//! them, and bounded.

/// The longest `classify=` a link may carry, characters: a few dozen rules
/// (each pattern is short), and a link stays well inside the lengths
/// browsers and chat tools keep. A project choice.
pub const MAX_CLASSIFY_CHARS: usize = 4096;

/// The rules of a `classify=` value or of the measured view's box: each
/// line checked as `overlap-lab import --classify-file` checks it, blank
/// lines and comments dropped; `None` when no rule is left. A refusal names
/// the line and the valid form.
pub fn classify_rules(text: &str) -> Result<Option<String>, String> {
    let chars = text.chars().count();
    if chars > MAX_CLASSIFY_CHARS {
        return Err(format!(
            "{chars} characters of rules: valid is at most {MAX_CLASSIFY_CHARS}"
        ));
    }
    overlap_trace::rules::parse_rules(text, "rules")?;
    let kept: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    Ok((!kept.is_empty()).then(|| kept.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use overlap_core::share_link;

    /// As many chapters as a tour might have; the bound is the caller's.
    const CHAPTERS: usize = 6;

    fn pairs(q: &str) -> Vec<(String, String)> {
        share_link::decode(q, crate::view_query::VIEW_KEYS).view
    }

    #[test]
    fn classification_rules_round_trip_and_a_bad_rule_is_named() {
        let view = crate::view_query::ViewParams {
            classify: Some("my_a2a_kernel=all_to_all:ep\nflash_fwd=compute".to_string()),
            ..crate::view_query::ViewParams::default()
        };
        let q = crate::view_query::join(String::new(), &crate::view_query::view_pairs(&view));
        let mut errors = Vec::new();
        let (back, _) = crate::view_query::parse_view(&pairs(&q), CHAPTERS, &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(back.classify, view.classify, "{q}");
        // Blank lines and comments are dropped; nothing left is no rules.
        assert_eq!(
            classify_rules("\n# mine\n  my_a2a_kernel=all_to_all:ep \n")
                .unwrap()
                .as_deref(),
            Some("my_a2a_kernel=all_to_all:ep")
        );
        assert_eq!(classify_rules(" \n# only a comment").unwrap(), None);
        // A bad rule names the key and the line; the view keeps none.
        let mut errors = Vec::new();
        let (back, _) = crate::view_query::parse_view(
            &pairs("classify=ok_kernel%3Dcompute%0Anonsense"),
            CHAPTERS,
            &mut errors,
        );
        assert_eq!(back.classify, None);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].field, "classify");
        assert!(errors[0].message.contains("line 2"), "{errors:?}");
        // Too long is refused with the bound.
        let long = "k=compute\n".repeat(MAX_CLASSIFY_CHARS / 10 + 1);
        let e = classify_rules(&long).unwrap_err();
        assert!(e.contains(&MAX_CLASSIFY_CHARS.to_string()), "{e}");
    }
}
