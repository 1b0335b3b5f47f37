//! Entry point: mounts the app and nothing else (components live in the library).

fn main() {
    overlap_lab_app::mount();
}
