//! Each figure's variance parts as sums over its bins: what one bin adds (`Figure::terms`)
//! and how the sums make the figure (`Figure::combine`). The parts `estimate` returns are
//! built this way, and the plan search keeps the same sums running, so that a projection
//! after one bin's samples changed costs a step, not a pass over every bin (at K = 500 the
//! passes were 60% of a search's time).
//!
//! A total's terms add up as they are. The speedup `X / Y` scales every bin's noise by
//! `(X / Y^2)^2` and its bias by `X / Y`, which change with every bin: its terms are kept
//! before that scale, and `combine` applies it to the sums.

use std::ops::{AddAssign, SubAssign};

use super::BinSums;

/// A figure the estimate projects: a configuration's total, or the paired speedup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    /// The baseline total `sum w x`, its offsets known on the baseline.
    Baseline,
    /// The new configuration's total `sum w y`, the offsets carried over.
    New,
    /// The paired speedup `sum w x / sum w y`.
    Speedup,
}

/// One bin's additive share of a figure; the sum over the bins is what `Figure::combine`
/// reads. For the speedup, the noise and bias terms are before the ratio's scale.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BinTerms {
    /// `w x`: the baseline total's share (the speedup's numerator).
    pub x: f64,
    /// The bin's share of the figure's value: `w x` for the baseline, `w y` otherwise.
    pub value: f64,
    /// The noise of one profiled iteration, `(w v)^2 cv^2`.
    pub per_sample: f64,
    /// `per_sample / s` at the bin's `s` distinct iterations.
    pub noise: f64,
    /// What no sample shrinks: less the finite population's share, plus the noise of the
    /// picked key's mean the carried offsets rest on.
    pub rest: f64,
    /// The known error of these picks (the speedup's: as a share of the new total).
    pub bias: f64,
    /// The speedup's known error as a share of the baseline total.
    pub bias_over_x: f64,
    /// 1 where the bin's keys are ones the baseline cannot tell apart (`KeyNoise::blind`) and
    /// it was not profiled whole: the figure cannot be bounded.
    pub blind_unprofiled: u32,
    /// 1 where the bin was not profiled whole: with silent data, the figure cannot be bounded.
    pub unprofiled: u32,
}

impl AddAssign for BinTerms {
    fn add_assign(&mut self, other: BinTerms) {
        self.x += other.x;
        self.value += other.value;
        self.per_sample += other.per_sample;
        self.noise += other.noise;
        self.rest += other.rest;
        self.bias += other.bias;
        self.bias_over_x += other.bias_over_x;
        self.blind_unprofiled += other.blind_unprofiled;
        self.unprofiled += other.unprofiled;
    }
}

impl SubAssign for BinTerms {
    fn sub_assign(&mut self, other: BinTerms) {
        self.x -= other.x;
        self.value -= other.value;
        self.per_sample -= other.per_sample;
        self.noise -= other.noise;
        self.rest -= other.rest;
        self.bias -= other.bias;
        self.bias_over_x -= other.bias_over_x;
        self.blind_unprofiled -= other.blind_unprofiled;
        self.unprofiled -= other.unprofiled;
    }
}

/// A figure made of its summed terms: its value, the factor on its summed noise and rest,
/// and its bias.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Combined {
    pub value: f64,
    pub noise_scale: f64,
    pub bias: f64,
}

impl Figure {
    /// Bin `b`'s terms, one profiled iteration's squared relative noise being `cv2`.
    ///
    /// A total's bin `v` (`x` or `y`) of weight `w`: noise `(w v)^2 cv^2 (1/s - 1/w)`; the
    /// picks' offsets as a bias: on the baseline `w v d/x`, known; carried to a new
    /// configuration, either its own logged offset (with rows of other keys carried at the
    /// picks' ratio from their known baseline spread `x - key mean`: what is left unknown is
    /// those rows' baseline noise, an alternate seen once having been ranked near its bin's
    /// mean partly by it), or the baseline's realised offset, whose uncertainty is the noise of
    /// the picked key's baseline mean (the pick favours keys whose noise brought them near
    /// their bin's mean).
    ///
    /// The speedup (delta method): the new pick's noise and the noise of both keys' means;
    /// the representation offsets cancel, except where both configurations' offsets are
    /// known from their logs and the picked key stands apart from its bin differently on each
    /// (what the key does not see); the baseline's values at the picks stand from their keys'
    /// means by a known amount the new configuration does not share under independent noise.
    pub fn terms(self, b: &BinSums, cv2: f64) -> BinTerms {
        let v = match self {
            Figure::Baseline => b.x,
            Figure::New | Figure::Speedup => b.y,
        };
        let share = b.weight * v;
        let scale = share.powi(2);
        let per_sample = scale * cv2;
        let whole = b.distinct as f64 >= b.weight.floor();
        let mut terms = BinTerms {
            x: b.weight * b.x,
            value: share,
            per_sample,
            noise: per_sample / b.distinct.max(1) as f64,
            // A bin profiled whole has no noise left: `1/s - 1/w` is then 0.
            rest: -per_sample / b.weight.max(1.0),
            blind_unprofiled: u32::from(b.key.blind && !whole),
            unprofiled: u32::from(!whole),
            ..BinTerms::default()
        };
        let key_cv2 = b.key.cv.powi(2);
        match (self, b.key.new) {
            (Figure::Baseline, _) => terms.bias = share * b.offset_rel(),
            (Figure::New, Some(new)) => {
                terms.bias = b.weight * new.offset + share * b.pick_offset_rel();
                terms.rest += scale * key_cv2 * b.other_keys_share(new);
            }
            (Figure::New, None) => {
                terms.rest += scale * b.key_mean_noise(key_cv2);
                terms.bias = share * b.offset_rel();
            }
            (Figure::Speedup, Some(new)) => {
                terms.bias_over_x = b.weight * (b.x - b.key.mean + b.key.offset);
                terms.bias = -b.weight * (b.y * b.pick_offset_rel() + new.offset);
                terms.rest += scale * key_cv2 * b.other_keys_share(new);
            }
            (Figure::Speedup, None) => {
                terms.rest += scale * b.key_mean_noise(key_cv2);
                terms.bias = share * b.pick_offset_rel();
            }
        }
        terms
    }

    /// The figure of these summed terms (values summed as the caller likes: compensated for
    /// the parts `estimate` returns).
    pub fn combine(self, sums: &BinTerms) -> Combined {
        match self {
            Figure::Baseline | Figure::New => Combined {
                value: sums.value,
                noise_scale: 1.0,
                bias: sums.bias,
            },
            Figure::Speedup => {
                let (x, y) = (sums.x, sums.value);
                let ratio = x / y;
                Combined {
                    value: ratio,
                    noise_scale: (ratio / y).powi(2),
                    bias: ratio * (sums.bias_over_x / x + sums.bias / y),
                }
            }
        }
    }

    /// Whether the figure's data show nothing of how the new configuration varies where it
    /// was not profiled whole (`VarianceParts::unbounded_where_silent`): the baseline's total
    /// is always bounded by its own log.
    pub fn unbounded(self, sums: &BinTerms, silent: bool) -> bool {
        self != Figure::Baseline && ((silent && sums.unprofiled > 0) || sums.blind_unprofiled > 0)
    }
}
