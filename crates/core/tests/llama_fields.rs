//! The Llama-shape workload fields (`kv_heads`, `ffn_hidden`, `mlp`,
//! `tied_embeddings`): absent, they leave every scenario as it was; given,
//! they round-trip through links; bad values are named with what is valid.

use overlap_core::scenario::{Mlp, Workload};
use overlap_core::{parse_scenario, share_link};

mod common;
use common::{names, refused};

#[test]
fn absent_fields_follow_the_gpt_shape() {
    let s = parse_scenario(r#"{"workload":{"hidden":2048,"heads":16}}"#).unwrap();
    let Workload::Transformer(t) = &s.workload else {
        panic!("a transformer")
    };
    assert_eq!(t.kv_heads, 16);
    assert_eq!(t.ffn_hidden, 4 * 2048);
    assert_eq!(t.mlp, Mlp::Gelu);
    assert!(t.tied_embeddings);
}

#[test]
fn given_fields_are_read() {
    let s = parse_scenario(
        r#"{"workload":{"kv_heads":8,"ffn_hidden":14336,"mlp":"swiglu","tied_embeddings":false}}"#,
    )
    .unwrap();
    let Workload::Transformer(t) = &s.workload else {
        panic!("a transformer")
    };
    assert_eq!(
        (t.kv_heads, t.ffn_hidden, t.mlp, t.tied_embeddings),
        (8, 14336, Mlp::Swiglu, false)
    );
}

#[test]
fn kv_heads_must_divide_heads() {
    names(
        &refused(r#"{"workload":{"heads":32,"kv_heads":6}}"#),
        "workload.kv_heads",
        "valid are divisors of 32",
    );
}

#[test]
fn kv_heads_must_split_over_tp() {
    // The default layout has tp 4.
    names(
        &refused(r#"{"workload":{"heads":32,"kv_heads":2}}"#),
        "workload.kv_heads",
        "multiples of 4",
    );
}

#[test]
fn ffn_hidden_must_split_over_tp() {
    names(
        &refused(r#"{"workload":{"ffn_hidden":14337}}"#),
        "workload.ffn_hidden",
        "multiples of 4",
    );
    names(
        &refused(r#"{"workload":{"ffn_hidden":0}}"#),
        "workload.ffn_hidden",
        "valid is 1 to",
    );
}

#[test]
fn a_bad_mlp_names_the_valid_forms() {
    names(
        &refused(r#"{"workload":{"mlp":"relu"}}"#),
        "workload.mlp",
        "swiglu",
    );
}

#[test]
fn old_links_open_as_before_and_new_fields_travel_in_links() {
    let old = share_link::decode("v=1&heads=16&hidden=2048", &[]);
    assert!(old.errors.is_empty(), "{:?}", old.errors);
    let s = old.input.resolve().unwrap();
    let Workload::Transformer(t) = &s.workload else {
        panic!("a transformer")
    };
    assert_eq!((t.kv_heads, t.ffn_hidden), (16, 8192));
    // Written back, a scenario without the new fields does not name them.
    let link = share_link::encode(&old.input, None);
    assert!(
        !link.contains("kv_heads") && !link.contains("ffn_hidden"),
        "{link}"
    );

    let new = share_link::decode(
        "v=1&kv_heads=8&ffn_hidden=14336&mlp=swiglu&tied_embeddings=0",
        &[],
    );
    assert!(new.errors.is_empty(), "{:?}", new.errors);
    let again = share_link::encode(&new.input, None);
    assert_eq!(
        share_link::decode(&again, &[]).input.resolve().unwrap(),
        new.input.resolve().unwrap()
    );
}
