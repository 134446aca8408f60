//! Scratch timing of one load (development aid).
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let t = std::time::Instant::now();
    let log = seqpoint::load_run(&path, &seqpoint::LoadOptions::default()).unwrap();
    let load = t.elapsed();
    let t = std::time::Instant::now();
    let groups = seqpoint::KeyGroups::from_log(&log);
    let group = t.elapsed();
    let hwm = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find(|l| l.starts_with("VmHWM"))
        .unwrap()
        .to_string();
    eprintln!(
        "rows {} load {:?} group {:?} groups {} {}",
        log.len(),
        load,
        group,
        groups.len(),
        hwm
    );
}
