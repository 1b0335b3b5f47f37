fn main() {
    for path in std::env::args().skip(1) {
        let input = match path.strip_prefix("preset:") {
            Some(id) => overlap_core::presets::find(id).unwrap().input(),
            None => overlap_core::ScenarioInput::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap(),
        };
        match input.resolve() {
            Ok(s) => {
                let b = overlap_core::workload::cost::budget_within(&s, u64::MAX).unwrap();
                let t = cpu();
                let _ = overlap_core::simulate_report(&s);
                let el = cpu() - t;
                let f = b.figures;
                println!("{path}: {el:.2} s planned {} work {} ops {} | ns/planned {:.0} ns/work {:.1} ns/(work+planned) {:.1}", f.planned_events, f.rerate_work, f.ops, el*1e9/f.planned_events as f64, el*1e9/f.rerate_work as f64, el*1e9/(f.rerate_work+f.planned_events) as f64);
            }
            Err(e) => println!("{path}: refused: {e}"),
        }
    }
}

fn cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let f: Vec<&str> = stat.rsplit(')').next().unwrap().split_whitespace().collect();
    (f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap()) / 100.0
}
