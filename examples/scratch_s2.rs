use seqpoint::select::plan::PlanRule;
use seqpoint::select::{BinCount, SelectOptions, SelectRequest};
use seqpoint::testkit::coverage::GENERATED_CASES;
use seqpoint::testkit::flow::{run_flow, FigureRedraws, FlowRun, Logged};

fn main() -> anyhow::Result<()> {
    let ci: usize = std::env::args().nth(1).unwrap().parse()?;
    let k: usize = std::env::args().nth(2).unwrap().parse()?;
    let m: u64 = std::env::args().nth(3).unwrap().parse()?;
    let case = &GENERATED_CASES[ci];
    let (mut b, mut nf, mut s) = (
        FigureRedraws::default(),
        FigureRedraws::default(),
        FigureRedraws::default(),
    );
    for trial in 0..200u64 {
        let lengths = case.lengths(5000 + trial);
        let mut rng =
            <rand_xoshiro::Xoshiro256PlusPlus as rand::SeedableRng>::seed_from_u64(1000 + trial);
        let baseline = case.times(&lengths, 0, &mut rng);
        let new = case.times(&lengths, 1, &mut rng);
        let mut options = SelectOptions {
            bins: BinCount::Fixed(k),
            error_curve: false,
            ..SelectOptions::default()
        };
        options.seed = trial;
        let o = run_flow(&FlowRun {
            lengths: &lengths,
            baseline: &baseline,
            new: &new,
            logged: Logged::LengthsOnly,
            request: SelectRequest {
                options,
                plan: (m > 1).then_some(PlanRule::Samples(m)),
            },
            target_pct: None,
            max_rounds: 0,
        })?;
        b.push(o.baseline.unwrap());
        nf.push(o.new);
        s.push(o.speedup);
    }
    println!("{} K {k} samples {m} fresh: held base {:.1} new {:.1} sp {:.1}; bias {:.2}/{:.2}; ± {:.2}/{:.2} p95 {:.2}/{:.2}", case.name, b.coverage_pct(), nf.coverage_pct(), s.coverage_pct(), b.mean_error_pct(), nf.mean_error_pct(), b.mean_half_width_pct(), nf.mean_half_width_pct(), b.p95_error_pct(), nf.p95_error_pct());
    Ok(())
}
