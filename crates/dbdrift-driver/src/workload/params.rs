// Per-thread parameter generation: draws every `$n` value of one statement execution into
// a reused byte buffer (no allocation once warm). Values within an event live in slots.

use super::digits::{push_digit_groups, push_i64};
use super::rng::Rng;
use super::zipf::Zipf;
use super::{Gen, ParamGen};
use crate::spec::RandSpec;

/// The text values of one execution's parameters, back to back in one buffer.
#[derive(Default)]
pub struct ParamValues {
    pub buf: Vec<u8>,
    ends: Vec<u32>,
    quoted: Vec<bool>,
}

impl ParamValues {
    pub fn with_capacity() -> Self {
        ParamValues {
            buf: Vec::with_capacity(4096),
            ends: Vec::with_capacity(64),
            quoted: Vec::with_capacity(64),
        }
    }

    #[inline]
    pub fn clear(&mut self) {
        self.buf.clear();
        self.ends.clear();
        self.quoted.clear();
    }

    #[inline]
    fn close(&mut self, quoted: bool) {
        self.ends.push(self.buf.len() as u32);
        self.quoted.push(quoted);
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    #[inline]
    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.buf[start..self.ends[i] as usize]
    }

    /// Whether the value must be quoted when inlined as a SQL literal.
    pub fn is_text(&self, i: usize) -> bool {
        self.quoted[i]
    }
}

enum IdDist {
    Uniform(i64),
    Zipf(Zipf),
}

pub struct Generator {
    pub rng: Rng,
    id: IdDist,
    slots: Vec<i64>,
}

impl Generator {
    pub fn new(seed: u64, rand: &RandSpec, id_max: i64, slots: usize) -> Self {
        let id = match rand {
            RandSpec::Uniform => IdDist::Uniform(id_max.max(1)),
            RandSpec::Zipfian { exp } => IdDist::Zipf(Zipf::new(id_max.max(1) as u64, *exp)),
        };
        Generator {
            rng: Rng::new(seed),
            id,
            slots: vec![0; slots],
        }
    }

    #[inline]
    fn id(&mut self) -> i64 {
        match &self.id {
            IdDist::Uniform(max) => 1 + self.rng.below(*max as u64) as i64,
            IdDist::Zipf(z) => z.sample(&mut self.rng) as i64,
        }
    }

    /// Table number in [1, tables].
    #[inline]
    pub fn table(&mut self, tables: u32) -> u32 {
        1 + self.rng.below(tables as u64) as u32
    }

    #[inline]
    pub fn fill(&mut self, params: &[ParamGen], out: &mut ParamValues) {
        out.clear();
        for p in params {
            let v = match p.gen {
                Gen::Id => self.id(),
                Gen::Uniform { lo, hi } => self.rng.range(lo, hi),
                Gen::Ref { slot, plus } => self.slots[slot].wrapping_add(plus),
                Gen::Int(v) => v,
                Gen::Digits(groups) => {
                    push_digit_groups(&mut out.buf, &mut self.rng, groups);
                    out.close(true);
                    continue;
                }
            };
            if let Some(slot) = p.save {
                self.slots[slot] = v;
            }
            push_i64(&mut out.buf, v);
            out.close(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(g: Gen, save: Option<usize>) -> ParamGen {
        ParamGen { gen: g, save }
    }

    #[test]
    fn ref_adds_to_the_saved_value_of_the_same_event() {
        let mut g = Generator::new(1, &RandSpec::Uniform, 1000, 1);
        let mut out = ParamValues::with_capacity();
        g.fill(
            &[
                gen(Gen::Id, Some(0)),
                gen(Gen::Ref { slot: 0, plus: 99 }, None),
            ],
            &mut out,
        );
        let a: i64 = std::str::from_utf8(out.get(0)).unwrap().parse().unwrap();
        let b: i64 = std::str::from_utf8(out.get(1)).unwrap().parse().unwrap();
        assert!((1..=1000).contains(&a));
        assert_eq!(b, a + 99);
    }

    #[test]
    fn values_are_laid_out_in_order_with_text_flags() {
        let mut g = Generator::new(1, &RandSpec::Uniform, 10, 0);
        let mut out = ParamValues::with_capacity();
        g.fill(
            &[gen(Gen::Int(-42), None), gen(Gen::Digits(1), None)],
            &mut out,
        );
        assert_eq!(out.len(), 2);
        assert_eq!(out.get(0), b"-42");
        assert_eq!(out.get(1).len(), 11);
        assert!(!out.is_text(0) && out.is_text(1));
    }

    #[test]
    fn id_stays_within_one_and_id_max() {
        let mut g = Generator::new(5, &RandSpec::Uniform, 3, 0);
        let mut out = ParamValues::with_capacity();
        let mut seen = [false; 4];
        for _ in 0..1000 {
            g.fill(&[gen(Gen::Id, None)], &mut out);
            let v: usize = std::str::from_utf8(out.get(0)).unwrap().parse().unwrap();
            assert!((1..=3).contains(&v));
            seen[v] = true;
        }
        assert!(seen[1] && seen[2] && seen[3]);
    }
}
