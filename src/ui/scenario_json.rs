//! The scenario as JSON: what `overlap-lab simulate` reads, so that the page
//! and the CLI can be compared on exactly the same input. Pasting JSON here
//! replaces the scenario; a refusal names the field and changes nothing.

use leptos::prelude::*;
use overlap_core::ScenarioInput;

use crate::state::AppState;

#[component]
pub fn ScenarioJson() -> impl IntoView {
    let state = expect_context::<AppState>();
    let json = Memo::new(move |_| state.input.with(ScenarioInput::to_json_pretty));
    let draft = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let apply = move |_| match ScenarioInput::from_json(&draft.get_untracked()) {
        Ok(input) => {
            error.set(None);
            state.input.set(input);
        }
        Err(e) => error.set(Some(e.to_string())),
    };
    view! {
        <details class="scenario-json">
            <summary>"Scenario JSON"</summary>
            <p class="note">"The same JSON runs in the command line: " <code>"overlap-lab simulate FILE"</code>"."</p>
            <pre data-scenario-json=move || json.get()>{move || json.get()}</pre>
            <label for="json-edit">"Paste a scenario and apply it"</label>
            <textarea
                id="json-edit"
                rows="6"
                spellcheck="false"
                prop:value=move || draft.get()
                on:input=move |ev| draft.set(event_target_value(&ev))
            ></textarea>
            <button type="button" on:click=apply>"Apply JSON"</button>
            {move || error.get().map(|e| view! { <p class="field-error" role="alert">{e}</p> })}
        </details>
    }
}
