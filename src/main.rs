//! Entry point: starts the app and nothing else (components live in the library).

fn main() {
    overlap_lab_app::start();
}
