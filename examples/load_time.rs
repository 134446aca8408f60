//! Scratch timing of one load (development aid): wall and CPU time per phase.
fn cpu() -> f64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
    t(u.ru_utime) + t(u.ru_stime)
}
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let (t, c) = (std::time::Instant::now(), cpu());
    let log = seqpoint::load_run(&path, &seqpoint::LoadOptions::default()).unwrap();
    let (load, load_cpu) = (t.elapsed(), cpu() - c);
    let (t, c) = (std::time::Instant::now(), cpu());
    let groups = seqpoint::KeyGroups::from_log(&log);
    let (group, group_cpu) = (t.elapsed(), cpu() - c);
    let hwm = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find(|l| l.starts_with("VmHWM"))
        .unwrap()
        .to_string();
    eprintln!(
        "rows {} load {:?} (cpu {:.3}s) group {:?} (cpu {:.3}s) groups {} {}",
        log.len(),
        load,
        load_cpu,
        group,
        group_cpu,
        groups.len(),
        hwm
    );
}
