//! Entry point: starts the app and nothing else (components live in the library).
//! The same module also runs in the simulation worker, where it mounts nothing.

fn main() {
    if !overlap_lab_app::serve_if_worker() {
        overlap_lab_app::start();
    }
}
