//! CMA-ES, the covariance matrix adaptation evolution strategy, minimizing
//! over the unit box `[0, 1]^n`.
//!
//! This is the algorithm of N. Hansen, "The CMA Evolution Strategy: A
//! Tutorial" (arXiv:1604.00772, 2016), Table 1 and Section 4 with positive
//! recombination weights only: rank-one and rank-μ covariance updates,
//! cumulative step-size adaptation, the `h_σ` stall of the rank-one path.
//! Candidates outside the box are drawn again (up to [`RESAMPLES`] times),
//! then clipped onto it, and the clipped point is what the update learns
//! from (the repair the tutorial's Appendix B names), as optuna's
//! `CmaEsSampler`, which BAM's `fit.py` uses, does.

/// How many times a candidate outside the box is drawn again before it is
/// clipped onto it.
pub const RESAMPLES: usize = 10;

/// SplitMix64 (Steele, Lea, Flood 2014) with Box–Muller normals: the
/// optimizer's seeded generator.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `(0, 1]`.
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal.
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// The strategy's state: the mean, the step size, the covariance and its
/// eigendecomposition, the two evolution paths.
#[derive(Debug, Clone)]
pub struct Cmaes {
    n: usize,
    lambda: usize,
    weights: Vec<f64>,
    mu_eff: f64,
    c_c: f64,
    c_sigma: f64,
    c_1: f64,
    c_mu: f64,
    d_sigma: f64,
    chi_n: f64,
    mean: Vec<f64>,
    sigma: f64,
    /// Row-major `n × n`.
    cov: Vec<f64>,
    /// Eigenvectors of `cov`, as columns (row-major `n × n`).
    basis: Vec<f64>,
    /// Square roots of `cov`'s eigenvalues.
    scales: Vec<f64>,
    p_c: Vec<f64>,
    p_sigma: Vec<f64>,
    generation: u32,
    rng: Rng,
}

/// One generation's candidates, in the unit box.
#[derive(Debug, Clone)]
pub struct Generation {
    /// `candidates[k]`: candidate `k`'s point.
    pub candidates: Vec<Vec<f64>>,
}

impl Cmaes {
    /// The tutorial's default population for `n` dimensions, `4 + ⌊3 ln n⌋`.
    pub fn default_population(n: usize) -> usize {
        4 + (3.0 * (n.max(1) as f64).ln()).floor() as usize
    }

    /// A strategy around `mean` (each coordinate in `[0, 1]`; clipped onto
    /// the box) with step size `sigma`, `lambda` candidates per generation
    /// (at least 2) and a seed.
    pub fn new(mean: Vec<f64>, sigma: f64, lambda: usize, seed: u64) -> Cmaes {
        let n = mean.len();
        let nf = n as f64;
        let lambda = lambda.max(2);
        let mu = lambda / 2;
        let raw: Vec<f64> = (1..=mu)
            .map(|i| ((lambda as f64 + 1.0) / 2.0).ln() - (i as f64).ln())
            .collect();
        let total: f64 = raw.iter().sum();
        let weights: Vec<f64> = raw.iter().map(|w| w / total).collect();
        let mu_eff = 1.0 / weights.iter().map(|w| w * w).sum::<f64>();
        let c_c = (4.0 + mu_eff / nf) / (nf + 4.0 + 2.0 * mu_eff / nf);
        let c_sigma = (mu_eff + 2.0) / (nf + mu_eff + 5.0);
        let c_1 = 2.0 / ((nf + 1.3).powi(2) + mu_eff);
        let c_mu =
            (1.0 - c_1).min(2.0 * (mu_eff - 2.0 + 1.0 / mu_eff) / ((nf + 2.0).powi(2) + mu_eff));
        let d_sigma = 1.0 + 2.0 * (((mu_eff - 1.0) / (nf + 1.0)).sqrt() - 1.0).max(0.0) + c_sigma;
        let chi_n = nf.sqrt() * (1.0 - 1.0 / (4.0 * nf) + 1.0 / (21.0 * nf * nf));
        let mut identity = vec![0.0; n * n];
        for i in 0..n {
            identity[i * n + i] = 1.0;
        }
        Cmaes {
            n,
            lambda,
            weights,
            mu_eff,
            c_c,
            c_sigma,
            c_1,
            c_mu,
            d_sigma,
            chi_n,
            mean: mean.into_iter().map(|x| x.clamp(0.0, 1.0)).collect(),
            sigma,
            cov: identity.clone(),
            basis: identity,
            scales: vec![1.0; n],
            p_c: vec![0.0; n],
            p_sigma: vec![0.0; n],
            generation: 0,
            rng: Rng::new(seed),
        }
    }

    /// Candidates per generation.
    pub fn population(&self) -> usize {
        self.lambda
    }

    /// The current mean.
    pub fn mean(&self) -> &[f64] {
        &self.mean
    }

    /// The current step size.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The largest standard deviation along any axis of the search
    /// distribution (`σ·max √C_ii`): how far apart candidates still are.
    pub fn spread(&self) -> f64 {
        (0..self.n)
            .map(|i| self.cov[i * self.n + i].sqrt())
            .fold(0.0, f64::max)
            * self.sigma
    }

    /// Draws one generation.
    pub fn ask(&mut self) -> Generation {
        let n = self.n;
        let candidates = (0..self.lambda)
            .map(|_| {
                let mut x = vec![0.0; n];
                for attempt in 0..=RESAMPLES {
                    let z: Vec<f64> = (0..n).map(|_| self.rng.normal()).collect();
                    for (i, xi) in x.iter_mut().enumerate() {
                        let y: f64 = (0..n)
                            .map(|j| self.basis[i * n + j] * self.scales[j] * z[j])
                            .sum();
                        *xi = self.mean[i] + self.sigma * y;
                    }
                    if x.iter().all(|v| (0.0..=1.0).contains(v)) || attempt == RESAMPLES {
                        break;
                    }
                }
                x.iter_mut().for_each(|v| *v = v.clamp(0.0, 1.0));
                x
            })
            .collect();
        Generation { candidates }
    }

    /// Learns from one generation's losses (`losses[k]` of `candidates[k]`;
    /// lower is better; NaN counts as worst).
    pub fn tell(&mut self, generation: &Generation, losses: &[f64]) {
        let n = self.n;
        let mut order: Vec<usize> = (0..generation.candidates.len()).collect();
        order.sort_by(|&a, &b| {
            let key = |k: usize| {
                if losses[k].is_nan() {
                    f64::INFINITY
                } else {
                    losses[k]
                }
            };
            key(a).total_cmp(&key(b))
        });
        let ys: Vec<Vec<f64>> = order
            .iter()
            .take(self.weights.len())
            .map(|&k| {
                let x = &generation.candidates[k];
                (0..n).map(|i| (x[i] - self.mean[i]) / self.sigma).collect()
            })
            .collect();
        let y_w: Vec<f64> = (0..n)
            .map(|i| self.weights.iter().zip(&ys).map(|(w, y)| w * y[i]).sum())
            .collect();
        for (m, y) in self.mean.iter_mut().zip(&y_w) {
            *m += self.sigma * y;
        }
        // C^{-1/2} y_w = B D^{-1} Bᵀ y_w.
        let projected: Vec<f64> = (0..n)
            .map(|j| (0..n).map(|i| self.basis[i * n + j] * y_w[i]).sum::<f64>() / self.scales[j])
            .collect();
        let whitened = (0..n).map(|i| {
            (0..n)
                .map(|j| self.basis[i * n + j] * projected[j])
                .sum::<f64>()
        });
        let norm_sigma = (self.c_sigma * (2.0 - self.c_sigma) * self.mu_eff).sqrt();
        for (p, w) in self.p_sigma.iter_mut().zip(whitened) {
            *p = (1.0 - self.c_sigma) * *p + norm_sigma * w;
        }
        self.generation += 1;
        let ps_norm = self.p_sigma.iter().map(|v| v * v).sum::<f64>().sqrt();
        let decay = 1.0 - (1.0 - self.c_sigma).powi(2 * self.generation as i32);
        let h_sigma = ps_norm / decay.sqrt() < (1.4 + 2.0 / (n as f64 + 1.0)) * self.chi_n;
        let h = f64::from(u8::from(h_sigma));
        let norm_c = (self.c_c * (2.0 - self.c_c) * self.mu_eff).sqrt();
        for (p, y) in self.p_c.iter_mut().zip(&y_w) {
            *p = (1.0 - self.c_c) * *p + h * norm_c * y;
        }
        let delta = (1.0 - h) * self.c_c * (2.0 - self.c_c);
        let keep = 1.0 + self.c_1 * delta - self.c_1 - self.c_mu;
        for i in 0..n {
            for j in 0..=i {
                let rank_mu: f64 = self
                    .weights
                    .iter()
                    .zip(&ys)
                    .map(|(w, y)| w * y[i] * y[j])
                    .sum();
                let c = keep * self.cov[i * n + j]
                    + self.c_1 * self.p_c[i] * self.p_c[j]
                    + self.c_mu * rank_mu;
                self.cov[i * n + j] = c;
                self.cov[j * n + i] = c;
            }
        }
        self.sigma *= ((self.c_sigma / self.d_sigma) * (ps_norm / self.chi_n - 1.0)).exp();
        let (values, vectors) = symmetric_eigen(&self.cov, n);
        self.scales = values.iter().map(|v| v.max(1e-300).sqrt()).collect();
        self.basis = vectors;
    }
}

/// Eigenvalues and eigenvectors (as the columns of a row-major `n × n`
/// matrix) of the symmetric row-major matrix `a`, by cyclic Jacobi
/// rotations (Golub & Van Loan, Matrix Computations, §8.5).
pub fn symmetric_eigen(a: &[f64], n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut a = a.to_vec();
    let mut v = vec![0.0; n * n];
    for i in 0..n {
        v[i * n + i] = 1.0;
    }
    for _sweep in 0..64 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i * n + j] * a[i * n + j])
            .sum();
        let diag: f64 = (0..n).map(|i| a[i * n + i] * a[i * n + i]).sum();
        if off <= 1e-30 * diag || off == 0.0 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                if apq == 0.0 {
                    continue;
                }
                let theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let (akp, akq) = (a[k * n + p], a[k * n + q]);
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for k in 0..n {
                    let (apk, aqk) = (a[p * n + k], a[q * n + k]);
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
                for k in 0..n {
                    let (vkp, vkq) = (v[k * n + p], v[k * n + q]);
                    v[k * n + p] = c * vkp - s * vkq;
                    v[k * n + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    ((0..n).map(|i| a[i * n + i]).collect(), v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eigen_reconstructs_a_symmetric_matrix() {
        let a = [4.0, 1.0, 0.5, 1.0, 3.0, -0.2, 0.5, -0.2, 2.0];
        let (values, vectors) = symmetric_eigen(&a, 3);
        for i in 0..3 {
            for j in 0..3 {
                let back: f64 = (0..3)
                    .map(|k| vectors[i * 3 + k] * values[k] * vectors[j * 3 + k])
                    .sum();
                approx::assert_abs_diff_eq!(back, a[i * 3 + j], epsilon = 1e-12);
            }
        }
    }

    #[test]
    fn finds_the_minimum_of_a_rotated_ellipsoid_in_the_box() {
        // f(x) = Σ 10^(2i/(n−1)) (d_i + d_{i+1}/2)², d = x − x*: an
        // ill-conditioned, non-separable bowl with its one minimum at x*.
        let n = 6;
        let target: Vec<f64> = (0..n).map(|i| 0.2 + 0.1 * i as f64).collect();
        let f = |x: &[f64]| -> f64 {
            (0..n)
                .map(|i| {
                    let d = |j: usize| if j < n { x[j] - target[j] } else { 0.0 };
                    let r = d(i) + 0.5 * d(i + 1);
                    10f64.powf(2.0 * i as f64 / (n - 1) as f64) * r * r
                })
                .sum()
        };
        let mut es = Cmaes::new(vec![0.5; n], 0.3, Cmaes::default_population(n), 7);
        let mut best = f64::INFINITY;
        for _ in 0..400 {
            let g = es.ask();
            let losses: Vec<f64> = g.candidates.iter().map(|x| f(x)).collect();
            best = losses.iter().copied().fold(best, f64::min);
            es.tell(&g, &losses);
        }
        assert!(best < 1e-10, "best {best}");
        for (m, t) in es.mean().iter().zip(&target) {
            approx::assert_abs_diff_eq!(*m, *t, epsilon = 1e-4);
        }
    }

    #[test]
    fn a_minimum_on_the_boundary_is_reached_and_candidates_stay_inside() {
        // Minimum at x = (0, 1, …): outside the box's interior.
        let n = 4;
        let f = |x: &[f64]| -> f64 {
            x.iter()
                .enumerate()
                .map(|(i, v)| {
                    if i % 2 == 0 {
                        (v + 0.5).powi(2)
                    } else {
                        (v - 1.5).powi(2)
                    }
                })
                .sum()
        };
        let mut es = Cmaes::new(vec![0.5; n], 0.3, 8, 3);
        for _ in 0..200 {
            let g = es.ask();
            assert!(g
                .candidates
                .iter()
                .flatten()
                .all(|v| (0.0..=1.0).contains(v)));
            let losses: Vec<f64> = g.candidates.iter().map(|x| f(x)).collect();
            es.tell(&g, &losses);
        }
        for (i, m) in es.mean().iter().enumerate() {
            let bound = if i % 2 == 0 { 0.0 } else { 1.0 };
            approx::assert_abs_diff_eq!(*m, bound, epsilon = 1e-3);
        }
    }
}
