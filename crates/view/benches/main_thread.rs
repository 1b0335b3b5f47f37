//! What the page's main thread does for a simulation, timed natively on the
//! largest presets: resolving the input before the run; then, with its
//! result, preparing the timeline (`Prepared`,
//! through `Scene::set_timeline`), laying it out and building the display
//! list for a whole-step view and a zoomed one. Figures are printed, never
//! asserted; WebAssembly runs them about 1.5 to 2 times slower.
//!
//!   cargo bench -p overlap-view --bench main_thread [preset-id-part]

use std::time::Instant;

use overlap_core::presets;
use overlap_view::layout::Layout;
use overlap_view::scene::Scene;
use overlap_view::{draw, lod};

const WIDTH_PX: f64 = 1200.0;

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let default_id = presets::default_preset().id;
    for id in [default_id, "megatron-145.6b", "megatron-1t"] {
        if filter.as_deref().is_some_and(|f| !id.contains(f)) {
            continue;
        }
        // The page resolves (parses and validates, the cost estimate included)
        // every input on its main thread before it sends it to the worker.
        let t = Instant::now();
        let resolved = presets::scenario(id);
        let resolve_ms = ms(t);
        match resolved {
            Ok(scenario) => {
                println!("{id:>16}: resolve {resolve_ms:.2} ms");
                bench(id, &scenario)
            }
            Err(e) => println!("{id}: {e:?}"),
        }
    }
}

fn bench(id: &str, scenario: &overlap_core::Scenario) {
    let t = Instant::now();
    let sim = overlap_core::simulate(scenario);
    let sim_ms = ms(t);
    let bars = sim.timeline.interval_count();
    let mut scene = Scene::new();
    let t = Instant::now();
    scene.set_timeline(sim.timeline, false, 0.0);
    let prepare_ms = ms(t);
    let layout = |scene: &mut Scene| {
        if let Some(p) = scene.current.as_ref() {
            scene.layout = Layout::compute(p, WIDTH_PX, scene.link_gpu);
        }
    };
    layout(&mut scene);
    let draw_ms = |scene: &Scene| {
        let t = Instant::now();
        let list = draw::timeline(scene, scene.window(1.0), 1.0);
        (ms(t), list.shapes.len())
    };
    let (fit_ms, fit_shapes) = draw_ms(&scene);
    let (walk_ms, pieces) = lod_walk_ms(&scene, false);
    let (blocks_ms, _) = lod_walk_ms(&scene, true);
    let step = scene.step_s();
    scene.zoom(0.1, step / 2.0);
    let (zoom_ms, zoom_shapes) = draw_ms(&scene);
    let t = Instant::now();
    drop(scene);
    let drop_ms = ms(t);
    println!(
        "{id:>16}: {bars} bars; simulate {sim_ms:.0} ms; prepare {prepare_ms:.1} ms; \
         display list whole step {fit_ms:.1} ms ({fit_shapes} shapes; of it the bars' \
         level-of-detail walk {blocks_ms:.1} ms by blocks, {walk_ms:.1} ms bar by bar, \
         {pieces} pieces), zoomed x10 {zoom_ms:.1} ms \
         ({zoom_shapes} shapes); drop {drop_ms:.1} ms"
    );
}

/// The level-of-detail walk alone, over every GPU lane, for the whole step:
/// bar by bar, or merging whole blocks of the lane's summary.
fn lod_walk_ms(scene: &Scene, by_blocks: bool) -> (f64, usize) {
    let Some(p) = scene.current.as_ref() else {
        return (0.0, 0);
    };
    let win = scene.window(1.0);
    let (left, right) = (scene.layout.left, scene.layout.right);
    let t = Instant::now();
    let mut pieces = 0;
    for gpu in 0..p.timeline.gpus.len() {
        for lane in overlap_core::Lane::ALL {
            let bars = p.lane(gpu, lane);
            let range = lod::visible_range(bars, win.0, win.1, p.max_dur_s(gpu, lane));
            let pos = |i: usize| {
                (
                    scene.x_of(bars[i].start_s, win),
                    scene.x_of(bars[i].end_s, win),
                )
            };
            let clip = (left, right);
            if by_blocks {
                let px_per_s = (right - left) / (win.1 - win.0);
                let blocks = p.blocks(gpu, lane);
                lod::pieces_by_blocks(bars, blocks, px_per_s, range, clip, 1.5, pos, |_| {
                    pieces += 1
                });
            } else {
                lod::pieces(bars, range, clip, 1.5, pos, |_| pieces += 1);
            }
        }
    }
    (ms(t), pieces)
}
