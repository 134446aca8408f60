//! Key groups with many distinct lengths whose mean cost is noisy, so that it is not monotone
//! in the length: the shape that makes the exact 1-D binning work hardest.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// `distinct` consecutive lengths from 1, each logged 1 to 4 times; an iteration of length `l`
/// costs `20 + 0.05 l + 2e-5 l^2` (the scale generator's baseline curve) times a log-normal
/// factor of relative spread `noise`. Returns the groups' counts and mean costs, in length
/// order, as `KeyGroups::counts` and `KeyGroups::binning_values` give them.
pub fn noisy_groups(distinct: usize, noise: f64, seed: u64) -> (Vec<u64>, Vec<f64>) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut normal = || {
        // Box-Muller, one value of the pair (speed does not matter here).
        let u1: f64 = 1.0 - rng.gen::<f64>();
        let u2: f64 = rng.gen::<f64>();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    };
    let mut counts = Vec::with_capacity(distinct);
    let mut values = Vec::with_capacity(distinct);
    for g in 0..distinct {
        let l = (g + 1) as f64;
        let curve = 20.0 + 0.05 * l + 2.0e-5 * l * l;
        let count = 1 + (normal().abs() * 1.5) as u64 % 4;
        let sum: f64 = (0..count).map(|_| curve * (noise * normal()).exp()).sum();
        counts.push(count);
        values.push(sum / count as f64);
    }
    (counts, values)
}
