// Zipfian ids: sysbench's rejection-inversion sampler (sb_rand.c, after Apache Commons
// Math's ZipfDistribution). Constants are computed once per (n, exponent).

use super::rng::Rng;

pub struct Zipf {
    n: u64,
    exp: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    s: f64,
}

fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * 1.0 / 3.0 * (1.0 + 0.25 * x))
    }
}

impl Zipf {
    /// Sampler over [1, n] with exponent `exp` (> 0).
    pub fn new(n: u64, exp: f64) -> Self {
        let mut z = Zipf {
            n: n.max(1),
            exp,
            h_integral_x1: 0.0,
            h_integral_n: 0.0,
            s: 0.0,
        };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(z.n as f64 + 0.5);
        z.s = 2.0 - z.h_integral_inv(z.h_integral(2.5) - z.h(2.0));
        z
    }

    fn h(&self, x: f64) -> f64 {
        (-self.exp * x.ln()).exp()
    }

    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        helper2((1.0 - self.exp) * log_x) * log_x
    }

    fn h_integral_inv(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.exp)).max(-1.0);
        (helper1(t) * x).exp()
    }

    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_integral_n + rng.unit_f64() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inv(u);
            let k = ((x + 0.5) as u64).clamp(1, self.n);
            let kf = k as f64;
            if kf - x <= self.s || u >= self.h_integral(kf + 0.5) - self.h(kf) {
                return k;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipfian_stays_in_range() {
        let z = Zipf::new(1000, 0.8);
        let mut r = Rng::new(3);
        for _ in 0..50_000 {
            let k = z.sample(&mut r);
            assert!((1..=1000).contains(&k));
        }
    }

    #[test]
    fn zipfian_is_skewed_towards_small_ids() {
        let z = Zipf::new(1000, 0.8);
        let mut r = Rng::new(4);
        let n = 100_000;
        let low = (0..n).filter(|_| z.sample(&mut r) <= 10).count();
        // Uniform would put 1 % in [1, 10]; exponent 0.8 puts about 16 % there.
        assert!(low > n / 10, "only {low} of {n} samples in [1, 10]");
        let one = (0..n).filter(|_| z.sample(&mut r) == 1).count();
        let hundred = (0..n).filter(|_| z.sample(&mut r) == 100).count();
        assert!(one > 10 * hundred.max(1), "P(1)={one} vs P(100)={hundred}");
    }

    #[test]
    fn zipfian_with_exponent_one_stays_in_range() {
        let z = Zipf::new(50, 1.0);
        let mut r = Rng::new(5);
        for _ in 0..10_000 {
            assert!((1..=50).contains(&z.sample(&mut r)));
        }
    }
}
